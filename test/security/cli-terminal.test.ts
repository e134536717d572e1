import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';

/** Terminal control a repository or registry can plant in file names and values. */
const sequences: Array<[string, string]> = [
  ['an OSC 52 clipboard write', '\x1b]52;c;aGVsbG8=\x07'],
  ['an OSC 8 hyperlink ended by ST', '\x1b]8;;http://canary.invalid/\x1b\\'],
  ['a screen clear', '\x1b[2J\x1b[H'],
  ['an 8-bit CSI', '\u009b2J'],
  ['a lone carriage return', 'ok\rFAKE'],
  ['a bell, a backspace and DEL', '\x07\x08\x7f'],
];

/** C0 except LF and TAB, DEL, C1 — a CR only as part of CRLF. */
// eslint-disable-next-line no-control-regex
const control = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/;

async function cli(argv: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
  return { code, stdout, stderr };
}

describe('the escalator CLI on a terminal', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'escalator-cli-control-'));
  });

  describe.each(sequences)('when repository text holds %s', (_what, sequence) => {
    it('set-image prints the file name without it', async () => {
      const name = `evil${sequence.replaceAll('/', '_')}.yaml`;
      writeFileSync(join(dir, name), 'image: ghcr.io/example/hello:1.0.0\n');
      const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.'], dir);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('changed   evil');
      expect(result.stdout).not.toMatch(control);
    });

    it('set-image --dry-run prints the file content without it', async () => {
      writeFileSync(join(dir, 'values.yaml'), `# ${sequence}\nimage: ghcr.io/example/hello:1.0.0\n`);
      const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.', '--dry-run'], dir);
      expect(result.stdout).toContain('+image: ghcr.io/example/hello:1.2.3');
      expect(result.stdout).not.toMatch(control);
    });

    it('set-image prints a refusal without it', async () => {
      writeFileSync(join(dir, `bad${sequence.replaceAll('/', '_')}.yaml`), 'image: ghcr.io/example/hello:${TAG}\n');
      const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.'], dir);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('refused');
      expect(result.stderr).not.toMatch(control);
    });

    it('validate-config prints the problems without it, and --json keeps the exact value in valid JSON', async () => {
      mkdirSync(join(dir, '.github'));
      const key = `k${sequence}`;
      writeFileSync(
        join(dir, '.github/escalator.yml'),
        `${JSON.stringify(key)}: 1\nenvironments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n`,
      );
      const text = await cli(['validate-config'], dir);
      expect(text.code).toBe(2);
      expect(text.stderr).toContain('unknown key');
      expect(text.stderr).not.toMatch(control);
      const json = await cli(['validate-config', '--json'], dir);
      expect(json.stdout).not.toMatch(control);
      const parsed = JSON.parse(json.stdout) as { problems: Array<{ message: string }> };
      expect(parsed.problems.map((problem) => problem.message).join('\n')).toContain(key);
    });

    it('echoes a bad argument without it', async () => {
      const result = await cli(['set-image', `ghcr.io/example/hello:${sequence}`, '.'], dir);
      expect(result.code).toBe(2);
      expect(result.stderr).not.toMatch(control);
      const unknown = await cli([`frob${sequence}`], dir);
      expect(unknown.stderr).toContain('unknown command');
      expect(unknown.stderr).not.toMatch(control);
    });
  });

  it('keeps CRLF and tabs, which move no cursor backwards', async () => {
    writeFileSync(
      join(dir, 'values.yaml'),
      'image: # the\tapp\r\n  repository: ghcr.io/example/hello\r\n  tag: 1.0.0\r\n',
    );
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.', '--dry-run'], dir);
    expect(result.stdout).toContain('-  tag: 1.0.0\r\n+  tag: 1.2.3\r\n');
    expect(result.stdout).toContain('the\tapp');
  });
});
