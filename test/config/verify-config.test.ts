import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { formatProblems, parseRepoConfig, type ConfigProblem } from '../../src/config/repo-config.js';

const lines = (...xs: string[]) => `${xs.join('\n')}\n`;
const env = ['environments:', '  - name: prod', '    paths: ["apps/*/prod"]', '    from: registry', '    verify:'];
// A P-256 public key generated once for this file (not secret: a public key is published by design).
const KEY = [
  '-----BEGIN PUBLIC KEY-----',
  'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEr6XYbFs3XALB2H86mWoA6PC2Bmy7',
  '4LlHzF0rM6hLTwSMRTHWImEBeocYgknDYODqsob0ajEeCmB2DaMStjgUhQ==',
  '-----END PUBLIC KEY-----',
];

function problemsOf(text: string): Omit<ConfigProblem, 'file'>[] {
  const result = parseRepoConfig(text);
  if (result.ok) throw new Error(`expected problems, got ${JSON.stringify(result.config)}`);
  return result.problems.map(({ file: _file, ...rest }) => rest);
}

describe('environments[].verify', () => {
  it('reads keys, signers, a trusted root and provenance', () => {
    const result = parseRepoConfig(
      lines(
        ...env,
        '      keys:',
        '        - |',
        ...KEY.map((line) => `          ${line}`),
        '      signers:',
        '        - issuer: https://token.actions.githubusercontent.com',
        '          subject: https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main',
        '          repository: acme/hello',
        '      trustedRoot: public-good',
        '      provenance: true',
      ),
    );
    if (!result.ok) throw new Error(formatProblems(result.problems));
    expect(result.config.environments[0]?.verify).toEqual({
      keys: [`${KEY.join('\n')}\n`],
      signers: [
        {
          issuer: 'https://token.actions.githubusercontent.com',
          subject: 'https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main',
          repository: 'acme/hello',
        },
      ],
      trustedRoot: 'public-good',
      provenance: true,
    });
  });

  it('is absent when not written: nothing is verified', () => {
    const result = parseRepoConfig(lines(...env.slice(0, -1)));
    expect(result.ok && result.config.environments[0]?.verify).toBeUndefined();
  });

  // Each bad policy: the line, the path, what is wrong and what to write instead.
  const cases: [name: string, yaml: string, problems: Omit<ConfigProblem, 'file'>[]][] = [
    [
      'no key and no signer',
      lines(...env, '      provenance: false'),
      [
        {
          line: 5,
          col: 5,
          path: 'environments[0].verify',
          message: 'verify names no key and no signer',
          hint: 'add keys: (cosign public keys) or signers: (keyless identities), or remove verify',
        },
      ],
    ],
    [
      'a key that is not PEM',
      lines(...env, '      keys: ["ssh-ed25519 AAAAC3Nza"]'),
      [
        {
          line: 6,
          col: 14,
          path: 'environments[0].verify.keys[0]',
          message: 'the key is not a PEM public key',
          hint: 'paste the whole cosign.pub, from "-----BEGIN PUBLIC KEY-----" to "-----END PUBLIC KEY-----", as a block scalar (keys: [|])',
        },
      ],
    ],
    [
      'a PEM key with damaged base64',
      lines(
        ...env,
        '      keys:',
        '        - |',
        '          -----BEGIN PUBLIC KEY-----',
        '          MFkwEwYHKo',
        '          -----END PUBLIC KEY-----',
      ),
      [
        {
          line: 7,
          col: 11,
          path: 'environments[0].verify.keys[0]',
          message: 'the public key cannot be read (its base64 is damaged)',
          hint: 'paste the whole cosign.pub, from "-----BEGIN PUBLIC KEY-----" to "-----END PUBLIC KEY-----", as a block scalar (keys: [|])',
        },
      ],
    ],
    [
      'signers without a trusted root',
      lines(
        ...env,
        '      signers:',
        '        - issuer: https://token.actions.githubusercontent.com',
        '          subject: x',
      ),
      [
        {
          line: 6,
          col: 7,
          path: 'environments[0].verify.signers',
          message: 'signers need a trustedRoot',
          hint: 'add trustedRoot: with the name of the Sigstore trusted root the operator mounted (docs/security.md)',
        },
      ],
    ],
    [
      'a signer without a subject',
      lines(
        ...env,
        '      trustedRoot: public-good',
        '      signers:',
        '        - issuer: https://token.actions.githubusercontent.com',
      ),
      [
        {
          line: 8,
          col: 11,
          path: 'environments[0].verify.signers[0]',
          message: 'a signer names no subject',
          hint: 'add subject: (the exact identity) or subjectPattern: (an anchored RE2 pattern); without one, anyone the issuer vouches for would pass',
        },
      ],
    ],
    [
      'an unanchored subject pattern',
      lines(
        ...env,
        '      trustedRoot: public-good',
        '      signers:',
        '        - issuer: https://token.actions.githubusercontent.com',
        '          subjectPattern: "github.com/acme/"',
      ),
      [
        {
          line: 9,
          col: 27,
          path: 'environments[0].verify.signers[0].subjectPattern',
          message: 'subjectPattern "github.com/acme/" is not anchored',
          hint: 'start it with ^ and end it with $ ("^github.com/acme/$"), or any subject that merely contains it would pass',
        },
      ],
    ],
    [
      'a trusted root named by a path',
      lines(
        ...env,
        '      keys: []',
        '      signers: [{issuer: "https://x.example", subject: s}]',
        '      trustedRoot: ../../etc/passwd',
      ),
      [
        {
          line: 8,
          col: 20,
          path: 'environments[0].verify.trustedRoot',
          message: '"../../etc/passwd" is not a trusted root name',
          hint: 'write the name of a file the operator mounted in ESCALATOR_SIGSTORE_TRUSTED_ROOTS, without ".json": lowercase letters, digits, ".", "-" and "_", like "public-good"',
        },
      ],
    ],
    [
      'an issuer that is not https',
      lines(...env, '      trustedRoot: public-good', '      signers: [{issuer: "http://10.0.0.1", subject: s}]'),
      [
        {
          line: 7,
          col: 26,
          path: 'environments[0].verify.signers[0].issuer',
          message: 'issuer "http://10.0.0.1" is not an https URL',
          hint: 'write the OIDC issuer that signed the identity, like "https://token.actions.githubusercontent.com" for GitHub Actions',
        },
      ],
    ],
    [
      'provenance without signers',
      lines(...env, '      keys:', '        - |', ...KEY.map((line) => `          ${line}`), '      provenance: true'),
      [
        {
          line: 12,
          col: 19,
          path: 'environments[0].verify.provenance',
          message: 'provenance needs signers',
          hint: 'SLSA provenance is checked in a keyless Sigstore bundle: add signers: naming the workflow that builds the image',
        },
      ],
    ],
  ];
  for (const [name, yaml, problems] of cases)
    it(`refuses ${name}, with the line and the fix`, () => {
      expect(problemsOf(yaml)).toEqual(problems);
    });
});

describe('escalator validate-config with a bad verify policy', () => {
  it('prints each problem as file:line:col with the fix, and exits 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalator-verify-cli-'));
    writeFileSync(
      join(dir, 'escalator.yml'),
      lines(
        ...env,
        '      signers:',
        '        - issuer: https://token.actions.githubusercontent.com',
        '      keys: [nope]',
      ),
    );
    let stderr = '';
    const code = await runCli(['validate-config', 'escalator.yml'], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      [
        'escalator.yml:6:7: signers need a trustedRoot (add trustedRoot: with the name of the Sigstore trusted root the operator mounted (docs/security.md))',
        'escalator.yml:7:11: a signer names no subject (add subject: (the exact identity) or subjectPattern: (an anchored RE2 pattern); without one, anyone the issuer vouches for would pass)',
        'escalator.yml:8:14: the key is not a PEM public key (paste the whole cosign.pub, from "-----BEGIN PUBLIC KEY-----" to "-----END PUBLIC KEY-----", as a block scalar (keys: [|]))',
        '',
      ].join('\n'),
    );
  });
});
