import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRelayTargets } from '../../src/config/relay-targets.js';
import { formatProblems, parseRepoConfig } from '../../src/config/repo-config.js';
import { RepoConfig } from '../../src/config/repo-config.schema.js';
import { SCHEMA_FILE } from '../../scripts/generate-schema.js';

/**
 * The configuration refuses a path pattern the one dialect cannot match, with the file, line and
 * column, in `.github/escalator.yml` (environment and diff paths) and in the relay targets file.
 */

const lines = (...rows: string[]) => `${rows.join('\n')}\n`;

describe('path patterns in .github/escalator.yml', () => {
  it('accepts lists, classes and ? in environment and diff paths', () => {
    const result = parseRepoConfig(
      lines(
        'environments:',
        '  - name: prod',
        '    paths: ["apps/{web,api}/overlays/prod", "clusters/env-[0-9]/v?"]',
        '    from: registry',
        'diff:',
        '  paths: ["apps/{web,api}/overlays/*"]',
      ),
    );
    expect(result.ok).toBe(true);
  });

  it('refuses what it cannot match, with file:line:col and what to write instead', () => {
    const result = parseRepoConfig(
      lines(
        'environments:',
        '  - name: prod',
        '    paths:',
        '      - apps/{web,api/overlays/prod',
        '      - apps/env-[z-a]/prod',
        '    from: registry',
        'diff:',
        '  paths: ["apps/web}/overlays/*"]',
      ),
      'gitops/.github/escalator.yml',
    );
    expect(result.ok).toBe(false);
    expect(formatProblems(result.ok ? [] : result.problems)).toBe(
      [
        'gitops/.github/escalator.yml:4:9: path "apps/{web,api/overlays/prod" opens a "{" that is never closed (a list is names separated by ",", like {web,api}; a name has no wildcard, "{" or "}")',
        'gitops/.github/escalator.yml:5:9: in path "apps/env-[z-a]/prod", the range "z-a" of "[z-a]" is backwards (write the lower end first: "a-z")',
        'gitops/.github/escalator.yml:8:11: path "apps/web}/overlays/*" closes a "}" that was never opened (a list is names separated by ",", like {web,api}; a name has no wildcard, "{" or "}")',
      ].join('\n'),
    );
  });
});

describe('path patterns of relay targets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'escalator-path-patterns-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses them at boot with file:line:col, in the same words', () => {
    const path = join(dir, 'targets.yaml');
    writeFileSync(
      path,
      lines(
        '- name: argocd',
        '  type: argocd',
        '  url: https://argocd.example.com/api/webhook',
        '  secret: {env: S}',
        '  repos: ["example/gitops"]',
        '  paths: ["apps/**.yaml", "apps/{web,api}/overlays/prod"]',
      ),
    );
    const result = loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: path, S: 'x' });
    expect(result).toEqual({
      ok: false,
      problems: [
        `${path}:6:11: targets[0].paths[0]: "**" in path "apps/**.yaml" must be a whole segment (write it between slashes, like apps/**/kustomization.yaml)`,
      ],
    });
  });
});

describe('the JSON Schema pattern editors use for paths', () => {
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as {
    properties: { environments: { items: { properties: { paths: { items: object } } } } };
  };
  const editor = new Ajv({ strict: true }).compile({
    ...schema.properties.environments.items.properties.paths.items,
    $schema: undefined,
  });
  const zod = (path: string) =>
    RepoConfig.safeParse({ environments: [{ name: 'dev', paths: [path], from: 'registry' }] }).success;

  it.each([
    'apps/{web,api}/prod',
    'a/{b}',
    'a/{,b}',
    'a/{b,}',
    'a/{.,b}',
    'a/{b,..}',
    'a/{b',
    'a/b}',
    'a/[bc]',
    'a/[!bc]',
    'a/[!]',
    'a/[]',
    'a/[',
    'a/]',
    'a/[*]',
    'a/v?',
    'a/?*',
    'a/{*}',
    'a/[a-c]',
    '{a,b}/**',
    '*/{a,b}-*',
  ])('%j: the same answer', (path) => {
    expect(editor(path)).toBe(zod(path));
  });

  it('for any string of these characters', () => {
    // No "-": a backwards range ([z-a]) is the one thing editors accept and Escalator refuses.
    const strings = fc
      .array(fc.constantFrom('a', 'b', '/', '*', '?', '[', ']', '{', '}', ',', '!', '.'), { maxLength: 40 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(strings, (path) => editor(path) === zod(path)),
      { numRuns: 2_000 },
    );
  });

  it('accepts a backwards range that Escalator refuses with a line', () => {
    expect(editor('a/[z-a]')).toBe(true);
    expect(zod('a/[z-a]')).toBe(false);
  });
});
