import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { renderConfigCheck } from '../../src/planners/config-check.js';
import { activeCharacters, splitLines } from '../fuzz/support/markdown-check.js';

const file = '.github/escalator.yml';

/** Values a pull request can put in .github/escalator.yml that the problems quote back. */
const hostile: Array<[string, string]> = [
  ['a fence and an image', 'x\n```\n![x](http://canary.invalid/p.png)'],
  ['a longer fence', 'x\n`````\n[click](http://canary.invalid/)\n`````'],
  ['a tilde fence', 'x\n~~~\n<img src=http://canary.invalid/p.png>'],
  ['a CR line break', 'x\r```\r![x](http://canary.invalid/p.png)'],
  ['HTML', '<img src=x onerror=alert(1)><details open>'],
  ['a mention and an issue link', '@octocat #1 @example/team'],
  ['a closing code span', '`` ` ```'],
];

/**
 * Configurations quoting a value in a problem, each with a plain value that is just as wrong: the
 * hostile summary must have the plain one's shape.
 */
const configs: Array<[string, (value: string) => string, string]> = [
  [
    'an environment name',
    (value) =>
      `environments:\n  - name: ${JSON.stringify(value)}\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n`,
    'plain name',
  ],
  [
    'a from',
    (value) => `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: ${JSON.stringify(value)}\n`,
    'plain',
  ],
  [
    'an unbound status context',
    (value) =>
      `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health:\n      statuses: [${JSON.stringify(value)}]\n`,
    'plain',
  ],
  [
    'an unknown key',
    (value) =>
      `${JSON.stringify(value)}: 1\nenvironments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n`,
    'plain',
  ],
];

/** The markdown outside fenced code blocks: the lines GitHub reads as markdown. */
function outsideFences(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of splitLines(markdown)) {
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (marker && marker[1]![0] === fence[0] && marker[1]!.length >= fence.length && marker[2]!.trim() === '')
        fence = undefined;
    } else if (marker) fence = marker[1];
    else out.push(line);
  }
  expect(fence, 'every fence is closed').toBeUndefined();
  return out;
}

describe('the escalator/config check run', () => {
  describe.each(configs)('when %s is hostile', (_where, config, plainValue) => {
    const plain = renderConfigCheck(parseRepoConfig(config(plainValue), file), file);

    it.each(hostile)('keeps %s inert', (_what, value) => {
      const result = parseRepoConfig(config(value), file);
      expect(result.ok).toBe(false);
      const check = renderConfigCheck(result, file);
      expect(check.conclusion).toBe('failure');
      // The same markdown outside code as with a plain value: nothing closed the block, nothing
      // became an image, link, tag, mention or issue reference.
      const hostileMarkdown = outsideFences(check.summary);
      const plainMarkdown = outsideFences(plain.summary);
      expect(hostileMarkdown.map(activeCharacters)).toEqual(plainMarkdown.map(activeCharacters));
      expect(hostileMarkdown.join('\n')).not.toMatch(/canary|@octocat|#1|<img/);
      // Every problem stays one line of the block, its line breaks shown, not taken.
      expect(splitLines(check.summary).length).toBe(splitLines(plain.summary).length);
      expect(check.title).toBe(plain.title);
    });
  });

  it('still says where each problem is, as file:line:col', () => {
    const check = renderConfigCheck(
      parseRepoConfig('environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    form: registry\n', file),
      file,
    );
    expect(check.summary).toContain('.github/escalator.yml:4:5:');
    expect(check.summary).toContain('Check it locally with `escalator validate-config` (installed from Escalator');
    expect(check.summary).not.toContain('npx escalator validate-config');
  });

  it('refuses a status context bound to no poster, with its line and the entry to write', () => {
    const check = renderConfigCheck(
      parseRepoConfig(
        'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health:\n      statuses: ["kustomization/apps-dev/*"]\n',
        file,
      ),
      file,
    );
    expect(check.conclusion).toBe('failure');
    expect(check.title).toBe('1 problem in .github/escalator.yml');
    expect(check.summary).toContain(
      '.github/escalator.yml:6:18: status context "kustomization/apps-dev/*" names no poster: anyone who can write to the repository could post it (write { context: "kustomization/apps-dev/*", user: "<login whose token the agent posts with>" }, or app: "<GitHub App slug or id>" instead of user (docs/health.md, "Who may speak for an environment"))',
    );
  });

  it('lists the environments of a valid configuration', () => {
    const check = renderConfigCheck(
      parseRepoConfig(
        'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n',
        file,
      ),
      file,
    );
    expect(check).toEqual({
      conclusion: 'success',
      title: 'Escalator configuration is valid',
      summary: '2 environments: dev (from registry), prod (from dev)',
    });
  });

  it('stays under the 65,535 characters GitHub accepts in a summary', () => {
    const keys = Array.from(
      { length: 400 },
      (_, i) => `${JSON.stringify(`k${i}-${'`'.repeat(i % 7)}${'x'.repeat(400)}`)}: 1`,
    ).join('\n');
    const check = renderConfigCheck(parseRepoConfig(`${keys}\nenvironments: []\n`, file), file);
    expect(check.summary.length).toBeLessThanOrEqual(65_535);
    expect(check.summary).toMatch(/and \d+ more problems?/);
    outsideFences(check.summary);
  });
});
