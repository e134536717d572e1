import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatProblems, parseRepoConfig, type ConfigProblem } from '../../src/config/repo-config.js';

const lines = (...xs: string[]) => `${xs.join('\n')}\n`;
const ok = ['environments:', '  - name: dev', '    paths: ["apps/*/overlays/dev"]', '    from: registry'];

function problemsOf(text: string): ConfigProblem[] {
  const result = parseRepoConfig(text);
  if (result.ok) throw new Error(`expected problems, got a valid config: ${JSON.stringify(result.config)}`);
  return result.problems;
}

describe('parseRepoConfig', () => {
  describe('when the file is valid', () => {
    it('fills in every default for a minimal file', () => {
      const result = parseRepoConfig(
        lines('environments:', '  - name: dev', '    paths: [apps/*/dev]', '    from: registry'),
      );
      expect(result).toEqual({
        ok: true,
        config: {
          dashboard: false,
          environments: [
            {
              name: 'dev',
              paths: ['apps/*/dev'],
              from: 'registry',
              autoMerge: false,
              soak: '0s',
              reviewers: [],
              group: false,
              rollback: 'manual',
            },
          ],
          images: [],
          dryRun: false,
          diff: { enabled: true, forks: false, paths: [] },
          labels: [],
        },
      });
    });

    it('reads every setting of a full file', () => {
      const result = parseRepoConfig(
        lines(
          'version: 1',
          'environments:',
          '  - name: prod            # order is free: from links environments',
          '    paths: ["apps/*/overlays/prod", "clusters/prod/**/values.yaml"]',
          '    from: staging',
          '    soak: 1d',
          '    reviewers: ["@example/release-managers", "alice"]',
          '    group: true',
          '  - name: staging',
          '    paths: ["apps/*/overlays/staging"]',
          '    from: dev',
          '    soak: 1h30m',
          '  - name: dev',
          '    paths: ["apps/*/overlays/dev"]',
          '    from: registry',
          '    autoMerge: true',
          'images:',
          '  - name: ghcr.io/example/hello',
          "    tags: '^\\d+\\.\\d+\\.\\d+$'",
          '    policy: semver-range',
          '    range: "^1.2"',
          '    pinDigest: true',
          '  - name: localhost:5000/nightly',
          '    policy: lexical',
          'dryRun: true',
          'diff: { enabled: false, forks: true, paths: ["apps/*/overlays/*"] }',
          'labels: [escalator, "area: deploy"]',
        ),
      );
      expect(result).toEqual({
        ok: true,
        config: {
          version: 1,
          dashboard: false,
          environments: [
            {
              name: 'prod',
              paths: ['apps/*/overlays/prod', 'clusters/prod/**/values.yaml'],
              from: 'staging',
              autoMerge: false,
              soak: '1d',
              reviewers: ['@example/release-managers', 'alice'],
              group: true,
              rollback: 'manual',
            },
            {
              name: 'staging',
              paths: ['apps/*/overlays/staging'],
              from: 'dev',
              autoMerge: false,
              soak: '1h30m',
              reviewers: [],
              group: false,
              rollback: 'manual',
            },
            {
              name: 'dev',
              paths: ['apps/*/overlays/dev'],
              from: 'registry',
              autoMerge: true,
              soak: '0s',
              reviewers: [],
              group: false,
              rollback: 'manual',
            },
          ],
          images: [
            {
              name: 'ghcr.io/example/hello',
              tags: '^\\d+\\.\\d+\\.\\d+$',
              policy: 'semver-range',
              range: '^1.2',
              pinDigest: true,
            },
            { name: 'localhost:5000/nightly', policy: 'lexical', pinDigest: false },
          ],
          dryRun: true,
          diff: { enabled: false, forks: true, paths: ['apps/*/overlays/*'] },
          labels: ['escalator', 'area: deploy'],
        },
      });
    });

    it('resolves anchors and aliases', () => {
      const result = parseRepoConfig(
        lines(
          ...ok,
          '    reviewers: &managers ["@example/release-managers"]',
          '  - name: prod',
          '    paths: ["apps/*/overlays/prod"]',
          '    from: dev',
          '    reviewers: *managers',
        ),
      );
      expect(result.ok && result.config.environments.map((e) => e.reviewers)).toEqual([
        ['@example/release-managers'],
        ['@example/release-managers'],
      ]);
    });

    it('reads CRLF line ends and a byte order mark', () => {
      const result = parseRepoConfig(`\uFEFF${ok.join('\r\n')}\r\n`);
      expect(result.ok && result.config.environments[0]?.paths).toEqual(['apps/*/overlays/dev']);
    });

    it('accepts tags patterns in RE2 syntax: named groups either way, classes, flags, \\x{…}', () => {
      for (const tags of [
        '^(?P<major>\\d+)\\.(?<minor>\\d+)$',
        '^[[:digit:]]+$',
        '(?i)^v\\d+$',
        '^\\x{e9}\\pL+$',
        '^(a|a)+$',
      ]) {
        expect(
          parseRepoConfig(lines(...ok, 'images:', '  - name: ghcr.io/example/hello', `    tags: '${tags}'`)).ok,
          tags,
        ).toBe(true);
      }
    });

    it('accepts team and user reviewers with or without @', () => {
      const result = parseRepoConfig(
        lines(...ok, '    reviewers: [alice, "@bob", example/sre, "@example/release-managers"]'),
      );
      expect(result.ok).toBe(true);
    });
  });

  describe('when the file has problems', () => {
    // Each problem: its exact line:col, the config path, the message and the hint.
    const cases: [name: string, yaml: string, problems: Omit<ConfigProblem, 'file'>[]][] = [
      [
        'unclosed quote',
        lines('environments:', '  - name: "dev', '    paths: ["a"]'),
        [{ line: 2, col: 15, path: '', message: 'YAML syntax error: missing closing "quote' }],
      ],
      [
        'duplicate key',
        lines(...ok, '    from: dev'),
        [
          {
            line: 5,
            col: 5,
            path: 'environments[0].from',
            message: 'duplicate key "from"',
            hint: 'a key may appear once in each mapping; remove or merge the repeated one',
          },
        ],
      ],
      [
        'empty',
        '',
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'the file is empty',
            hint: 'list your environments under environments:; see docs/configuration.md',
          },
        ],
      ],
      [
        'comments only',
        lines('# nothing yet'),
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'the file is empty',
            hint: 'list your environments under environments:; see docs/configuration.md',
          },
        ],
      ],
      [
        'bare document marker',
        lines('---'),
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'the file is empty',
            hint: 'list your environments under environments:; see docs/configuration.md',
          },
        ],
      ],
      [
        'root list',
        lines('- name: dev'),
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'expected a mapping of settings at the top level, found a list',
            hint: 'start with environments:',
          },
        ],
      ],
      [
        'root scalar',
        lines('hello'),
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'expected a mapping of settings at the top level, found the string "hello"',
            hint: 'start with environments:',
          },
        ],
      ],
      [
        'two documents',
        lines(...ok, '---', 'dryRun: true'),
        [
          {
            line: 5,
            col: 1,
            path: '',
            message: 'expected one YAML document, found 2',
            hint: 'remove the "---" separators and keep one configuration',
          },
        ],
      ],
      [
        'tab indent',
        lines('environments:', '\t- name: dev'),
        [{ line: 2, col: 1, path: '', message: 'YAML syntax error: tabs cannot indent', hint: 'indent with spaces' }],
      ],
      [
        'unresolved alias',
        lines(...ok.slice(0, 3), '    from: *source'),
        [
          {
            line: 4,
            col: 11,
            path: 'environments[0].from',
            message: 'alias "*source" refers to no anchor',
            hint: 'define &source earlier in the file, or write the value out',
          },
        ],
      ],
      [
        'alias bomb',
        lines(
          'a: &a [x, x, x, x, x, x, x, x, x, x]',
          'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
          'c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
          ...ok,
        ),
        [
          {
            line: 1,
            col: 1,
            path: '',
            message: 'cannot read the YAML: Excessive alias count indicates a resource exhaustion attack',
            hint: 'write the values out instead of using aliases',
          },
        ],
      ],
      [
        'misspelled root key',
        lines('enviroments:', '  - name: dev'),
        [
          {
            line: 1,
            col: 1,
            path: 'enviroments',
            message: 'unknown key "enviroments"',
            hint: 'did you mean "environments"?',
          },
        ],
      ],
      [
        'unknown root key',
        lines(...ok, 'colour: red'),
        [
          {
            line: 5,
            col: 1,
            path: 'colour',
            message: 'unknown key "colour"',
            hint: 'known keys: version, environments, images, dryRun, diff, labels, dashboard',
          },
        ],
      ],
      [
        'no environments',
        lines('environments: []'),
        [
          {
            line: 1,
            col: 15,
            path: 'environments',
            message: 'environments needs at least 1 entry',
            hint: 'add an environment with name, paths and from',
          },
        ],
      ],
      [
        'environments empty value',
        lines('environments:'),
        [
          {
            line: 1,
            col: 1,
            path: 'environments',
            message: 'environments must be a list, found an empty value',
            hint: 'write a value after "environments:"',
          },
        ],
      ],
      [
        'missing name',
        lines('environments:', '  - paths: ["a"]', '    from: registry'),
        [{ line: 2, col: 5, path: 'environments[0].name', message: 'missing required key "name" in environments[0]' }],
      ],
      [
        'paths not a list',
        lines('environments:', '  - name: dev', '    paths: apps/*/dev', '    from: registry'),
        [
          {
            line: 3,
            col: 12,
            path: 'environments[0].paths',
            message: 'paths must be a list, found the string "apps/*/dev"',
            hint: 'write a list: ["apps/*/dev"]',
          },
        ],
      ],
      [
        'empty paths',
        lines('environments:', '  - name: dev', '    paths: []', '    from: registry'),
        [
          {
            line: 3,
            col: 12,
            path: 'environments[0].paths',
            message: 'paths needs at least 1 entry',
            hint: 'add a path, like apps/*/overlays/dev',
          },
        ],
      ],
      [
        'yes is not a boolean',
        lines(...ok, '    autoMerge: yes'),
        [
          {
            line: 5,
            col: 16,
            path: 'environments[0].autoMerge',
            message: 'autoMerge must be true or false, found the string "yes"',
            hint: 'write true or false, without quotes',
          },
        ],
      ],
      [
        'soak without unit (number)',
        lines(...ok, '    soak: 30'),
        [
          {
            line: 5,
            col: 11,
            path: 'environments[0].soak',
            message: 'soak must be a duration like 30m, found the number 30',
            hint: 'add a unit: 30m',
          },
        ],
      ],
      [
        'soak without unit (string)',
        lines(...ok, '    soak: "90"'),
        [
          {
            line: 5,
            col: 11,
            path: 'environments[0].soak',
            message: 'duration "90" has no unit',
            hint: 'write 90s, 90m, 90h or 90d',
          },
        ],
      ],
      [
        'soak malformed',
        lines(...ok, '    soak: 30m1h'),
        [
          {
            line: 5,
            col: 11,
            path: 'environments[0].soak',
            message: 'invalid duration "30m1h"',
            hint: 'write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m',
          },
        ],
      ],
      [
        'empty from',
        lines('environments:', '  - name: dev', '    paths: ["a"]', '    from:'),
        [
          {
            line: 4,
            col: 5,
            path: 'environments[0].from',
            message: 'from must be a string, found an empty value',
            hint: 'write a value after "from:"',
          },
        ],
      ],
      [
        'unknown from',
        lines(...ok, '  - name: staging', '    paths: ["b"]', '    from: dve'),
        [
          {
            line: 7,
            col: 11,
            path: 'environments[1].from',
            message: 'from names no environment: "dve"',
            hint: 'did you mean "dev"?',
          },
        ],
      ],
      [
        'from itself',
        lines(...ok, '  - name: staging', '    paths: ["b"]', '    from: staging'),
        [
          {
            line: 7,
            col: 11,
            path: 'environments[1].from',
            message: 'environment "staging" cannot take images from itself',
            hint: 'use "registry" or another environment',
          },
        ],
      ],
      [
        'cycle',
        lines(
          ...ok,
          '  - name: staging',
          '    paths: ["b"]',
          '    from: prod',
          '  - name: prod',
          '    paths: ["c"]',
          '    from: qa',
          '  - name: qa',
          '    paths: ["d"]',
          '    from: staging',
        ),
        [
          {
            line: 7,
            col: 11,
            path: 'environments[1].from',
            message: 'promotion cycle: staging → qa → prod → staging',
            hint: 'one environment of the chain must take images from "registry"',
          },
        ],
      ],
      [
        'no registry',
        lines(
          'environments:',
          '  - name: staging',
          '    paths: ["b"]',
          '    from: prod',
          '  - name: prod',
          '    paths: ["c"]',
          '    from: staging',
        ),
        [
          {
            line: 1,
            col: 1,
            path: 'environments',
            message: 'no environment takes new images from "registry"',
            hint: 'set from: registry on the first environment, "staging"',
          },
          {
            line: 4,
            col: 11,
            path: 'environments[0].from',
            message: 'promotion cycle: staging → prod → staging',
            hint: 'one environment of the chain must take images from "registry"',
          },
        ],
      ],
      [
        'duplicate environment',
        lines(...ok, '  - name: dev', '    paths: ["b"]', '    from: registry'),
        [
          {
            line: 5,
            col: 11,
            path: 'environments[1].name',
            message: 'duplicate environment name "dev"',
            hint: 'environments[0] is already named "dev"; rename one of them',
          },
        ],
      ],
      [
        'environment named registry',
        lines('environments:', '  - name: registry', '    paths: ["a"]', '    from: registry'),
        [
          {
            line: 2,
            col: 11,
            path: 'environments[0].name',
            message: '"registry" cannot name an environment',
            hint: 'it is the source of new images in from:; choose another name',
          },
        ],
      ],
      [
        'environment name with space',
        lines('environments:', '  - name: my env', '    paths: ["a"]', '    from: registry'),
        [
          {
            line: 2,
            col: 11,
            path: 'environments[0].name',
            message: 'invalid environment name "my env"',
            hint: 'use letters, digits, "-" and "_" (at most 63), starting with a letter or digit',
          },
        ],
      ],
      [
        'bad paths',
        lines(
          'environments:',
          '  - name: dev',
          '    from: registry',
          '    paths:',
          '      - /apps/dev',
          '      - apps/../dev',
          '      - ./apps/dev',
          '      - apps//dev',
          '      - apps\\dev',
          '      - apps/a**/dev',
          '      - apps/*-*/dev',
          '      - ""',
        ),
        [
          {
            line: 5,
            col: 9,
            path: 'environments[0].paths[0]',
            message: 'path "/apps/dev" is absolute',
            hint: 'write it relative to the repository root: "apps/dev"',
          },
          {
            line: 6,
            col: 9,
            path: 'environments[0].paths[1]',
            message: 'path "apps/../dev" leaves the repository with ".."',
            hint: 'write the path from the repository root',
          },
          {
            line: 7,
            col: 9,
            path: 'environments[0].paths[2]',
            message: 'path "./apps/dev" has a "." segment',
            hint: 'remove the "./": "apps/dev"',
          },
          {
            line: 8,
            col: 9,
            path: 'environments[0].paths[3]',
            message: 'path "apps//dev" has an empty segment ("//")',
            hint: 'remove the extra "/"',
          },
          {
            line: 9,
            col: 9,
            path: 'environments[0].paths[4]',
            message: 'path "apps\\dev" contains "\\"',
            hint: 'separate path segments with "/"',
          },
          {
            line: 10,
            col: 9,
            path: 'environments[0].paths[5]',
            message: '"**" in path "apps/a**/dev" must be a whole segment',
            hint: 'write it between slashes, like apps/**/kustomization.yaml',
          },
          {
            line: 11,
            col: 9,
            path: 'environments[0].paths[6]',
            message: 'path segment "*-*" has more than one "*"',
            hint: 'use one "*" per segment; "*" matches a whole name or part of one, like app-*',
          },
          {
            line: 12,
            col: 9,
            path: 'environments[0].paths[7]',
            message: 'path is empty',
            hint: 'write a directory or file relative to the repository root, like apps/*/overlays/dev',
          },
        ],
      ],
      [
        'path in two environments',
        lines(
          ...ok,
          '  - name: staging',
          '    paths: ["apps/*/overlays/staging", "apps/*/overlays/dev", "apps/*/overlays/staging"]',
          '    from: dev',
        ),
        [
          {
            line: 6,
            col: 40,
            path: 'environments[1].paths[1]',
            message: 'path "apps/*/overlays/dev" already belongs to environment "dev"',
            hint: 'each path belongs to one environment',
          },
          {
            line: 6,
            col: 63,
            path: 'environments[1].paths[2]',
            message: 'path "apps/*/overlays/staging" is listed twice',
            hint: 'remove one of them',
          },
        ],
      ],
      [
        'bad reviewer',
        lines(...ok, '    reviewers: ["alice", "release managers", "@example/"]'),
        [
          {
            line: 5,
            col: 26,
            path: 'environments[0].reviewers[1]',
            message: '"release managers" is not a GitHub user or team',
            hint: 'write a login like alice or a team like @example/release-managers',
          },
          {
            line: 5,
            col: 46,
            path: 'environments[0].reviewers[2]',
            message: '"@example/" is not a GitHub user or team',
            hint: 'write a login like alice or a team like @example/release-managers',
          },
        ],
      ],
      [
        'image with tag',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello:1.2.3'),
        [
          {
            line: 6,
            col: 11,
            path: 'images[0].name',
            message: 'image name "ghcr.io/example/hello:1.2.3" has a tag',
            hint: 'remove ":1.2.3"; choose tags with tags: and policy:',
          },
        ],
      ],
      [
        'image with digest',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello@sha256:0123'),
        [
          {
            line: 6,
            col: 11,
            path: 'images[0].name',
            message: 'image name "ghcr.io/example/hello@sha256:0123" has a digest',
            hint: 'remove "@sha256:0123"; set pinDigest: true to have Escalator write digests',
          },
        ],
      ],
      [
        'image uppercase',
        lines(...ok, 'images:', '  - name: ghcr.io/Example/hello'),
        [
          {
            line: 6,
            col: 11,
            path: 'images[0].name',
            message: '"ghcr.io/Example/hello" is not an image repository name',
            hint: 'image repositories are lowercase: "ghcr.io/example/hello"',
          },
        ],
      ],
      [
        'bad tags regex',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', "    tags: '^v(\\d+'"),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is not a valid RE2 regular expression: missing closing )',
            hint: 'tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$',
          },
        ],
      ],
      [
        'tags with a backreference',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', "    tags: '^(\\d+)-\\1$'"),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is not a valid RE2 regular expression: invalid escape sequence "\\1"',
            hint: 'RE2 has no backreferences; write the repeated part out. tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$',
          },
        ],
      ],
      [
        'tags with a lookahead',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', "    tags: '^(?!latest$).+'"),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is not a valid RE2 regular expression: invalid or unsupported Perl syntax "(?!"',
            hint: 'RE2 has no lookahead or lookbehind; match the tag\'s whole shape instead, like ^v\\d+$ for "v" and digits. tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$',
          },
        ],
      ],
      [
        'tags with a lookbehind',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', "    tags: '(?<=v)\\d+'"),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is not a valid RE2 regular expression: unsupported lookbehind "(?<="',
            hint: 'RE2 has no lookahead or lookbehind; match the tag\'s whole shape instead, like ^v\\d+$ for "v" and digits. tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$',
          },
        ],
      ],
      [
        'tags with a JavaScript \\u escape',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', "    tags: '^\\u00e9'"),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is not a valid RE2 regular expression: invalid escape sequence "\\u"',
            hint: 'RE2 writes a code point as \\x{e9}, not \\u00e9. tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$',
          },
        ],
      ],
      [
        'tags too long',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', `    tags: '${'a'.repeat(1_001)}'`),
        [
          {
            line: 7,
            col: 11,
            path: 'images[0].tags',
            message: 'tags is longer than 1,000 characters (1,001)',
            hint: 'a tag has at most 128 characters; write a shorter pattern',
          },
        ],
      ],
      [
        'policy typo',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', '    policy: semvar'),
        [
          {
            line: 7,
            col: 13,
            path: 'images[0].policy',
            message:
              'policy must be one of newest, semver, semver-range, lexical, numerical, found the string "semvar"',
            hint: 'did you mean "semver"?',
          },
        ],
      ],
      [
        'semver-range without range',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', '    policy: semver-range'),
        [
          {
            line: 7,
            col: 13,
            path: 'images[0].policy',
            message: 'policy semver-range needs a range',
            hint: 'add a range, like range: "^1.2"',
          },
        ],
      ],
      [
        'range without semver-range',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', '    policy: semver', '    range: "^1.2"'),
        [
          {
            line: 8,
            col: 12,
            path: 'images[0].range',
            message: 'range applies only to policy semver-range, not semver',
            hint: 'set policy: semver-range, or remove range',
          },
        ],
      ],
      [
        'range with default policy',
        lines(...ok, 'images:', '  - name: ghcr.io/example/hello', '    range: "^1.2"'),
        [
          {
            line: 7,
            col: 12,
            path: 'images[0].range',
            message: 'range applies only to policy semver-range, not newest',
            hint: 'set policy: semver-range, or remove range',
          },
        ],
      ],
      [
        'invalid range',
        lines(
          ...ok,
          'images:',
          '  - name: ghcr.io/example/hello',
          '    policy: semver-range',
          '    range: "one point two"',
        ),
        [
          {
            line: 8,
            col: 12,
            path: 'images[0].range',
            message: 'invalid semver range "one point two"',
            hint: 'write a range like "^1.2", "~2.0.1" or ">=1.4.0 <2.0.0"',
          },
        ],
      ],
      [
        'duplicate image',
        lines(
          ...ok,
          'images:',
          '  - name: ghcr.io/example/hello',
          '  - name: ghcr.io/example/hello',
          '    policy: semver',
        ),
        [
          {
            line: 7,
            col: 11,
            path: 'images[1].name',
            message: 'duplicate policy for image "ghcr.io/example/hello"',
            hint: 'images[0] already configures it; merge the two entries',
          },
        ],
      ],
      [
        'flux policy with a marker suffix, and one policy under two images',
        lines(
          ...ok,
          'images:',
          '  - name: ghcr.io/example/hello',
          '    fluxPolicies: ["flux-system:hello:tag", "flux-system:shared"]',
          '  - name: ghcr.io/example/world',
          '    fluxPolicies: ["flux-system:shared"]',
        ),
        [
          {
            line: 7,
            col: 20,
            path: 'images[0].fluxPolicies[0]',
            message: 'Flux policy "flux-system:hello:tag" is not <namespace>:<name>',
            hint: 'write "flux-system:hello": the :tag, :name and :digest suffixes belong to markers, not to the policy',
          },
          {
            line: 9,
            col: 20,
            path: 'images[1].fluxPolicies[0]',
            message: 'Flux policy "flux-system:shared" is listed for two images',
            hint: 'images[0] already lists it; a policy sets one image, keep it under that one',
          },
        ],
      ],
      [
        'addImages on an environment fed by another',
        lines(...ok, '  - name: prod', '    paths: ["apps/*/overlays/prod"]', '    from: dev', '    addImages: true'),
        [
          {
            line: 8,
            col: 16,
            path: 'environments[1].addImages',
            message: 'addImages applies to environments that take images from "registry", not from "dev"',
            hint: 'remove it here: promotions set the images: entries that exist; set it on the environment that takes from "registry"',
          },
        ],
      ],
      [
        'image not a mapping',
        lines(...ok, 'images:', '  - ghcr.io/example/hello'),
        [
          {
            line: 6,
            col: 5,
            path: 'images[0]',
            message: 'images[0] must be a mapping, found the string "ghcr.io/example/hello"',
            hint: 'write name: ghcr.io/example/hello',
          },
        ],
      ],
      [
        'bad labels',
        lines(...ok, 'labels: ["", "' + 'x'.repeat(51) + '"]'),
        [
          { line: 5, col: 10, path: 'labels[0]', message: 'label is empty', hint: 'remove it or write a label name' },
          {
            line: 5,
            col: 14,
            path: 'labels[1]',
            message: 'label "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" is longer than 50 characters',
            hint: 'GitHub accepts label names up to 50 characters',
          },
        ],
      ],
      [
        'diff typo and string boolean',
        lines(...ok, 'diff:', '  enable: true', '  forks: "false"'),
        [
          { line: 6, col: 3, path: 'diff.enable', message: 'unknown key "enable"', hint: 'did you mean "enabled"?' },
          {
            line: 7,
            col: 10,
            path: 'diff.forks',
            message: 'forks must be true or false, found the string "false"',
            hint: 'write true or false, without quotes',
          },
        ],
      ],
      [
        'version 2',
        lines('version: 2', ...ok),
        [
          {
            line: 1,
            col: 10,
            path: 'version',
            message: 'unsupported version 2',
            hint: 'this Escalator reads version 1; remove the key or write version: 1',
          },
        ],
      ],
      [
        'empty list item',
        lines('environments:', '  -'),
        [
          {
            line: 2,
            col: 4,
            path: 'environments[0]',
            message: 'environments[0] must be a mapping, found an empty value',
            hint: 'fill in the entry or remove the empty "-"',
          },
        ],
      ],
      [
        'environments as a mapping',
        lines('environments:', '  name: dev', '  paths: [a]', '  from: registry'),
        [
          {
            line: 1,
            col: 1,
            path: 'environments',
            message: 'environments must be a list, found a mapping',
            hint: 'write each entry as a list item starting with "- "',
          },
        ],
      ],
      [
        'empty diff',
        lines(...ok, 'diff:'),
        [
          {
            line: 5,
            col: 1,
            path: 'diff',
            message: 'diff must be a mapping, found an empty value',
            hint: 'write a value after "diff:"',
          },
        ],
      ],
      [
        'list as a key',
        lines(...ok, '? [a]', ': b'),
        [
          {
            line: 5,
            col: 3,
            path: '',
            message: 'a key must be a name, found a list',
            hint: 'write a setting name before the ":"',
          },
        ],
      ],
      [
        'empty key',
        lines(...ok, '~: x'),
        [{ line: 5, col: 1, path: '', message: 'empty key', hint: 'write a setting name before the ":"' }],
      ],
      [
        'flow mapping',
        lines('environments: [{name: dev, paths: [a], from: registry, soak: 3x}]'),
        [
          {
            line: 1,
            col: 62,
            path: 'environments[0].soak',
            message: 'invalid duration "3x"',
            hint: 'write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m',
          },
        ],
      ],
      [
        'crlf and bom',
        '\uFEFF' + ['environments:', '  - name: dev', '    paths: ["a"]', '    from: regisry', ''].join('\r\n'),
        [
          {
            line: 1,
            col: 1,
            path: 'environments',
            message: 'no environment takes new images from "registry"',
            hint: 'set from: registry on the first environment, "dev"',
          },
          {
            line: 4,
            col: 11,
            path: 'environments[0].from',
            message: 'from names no environment: "regisry"',
            hint: 'did you mean "registry"?',
          },
        ],
      ],
    ];

    it.each(cases)('reports %s', (_name, yaml, expected) => {
      expect(problemsOf(yaml)).toEqual(expected.map((p) => ({ file: '.github/escalator.yml', ...p })));
    });

    it('reports every problem of a file, in order, formatted for terminals and problem matchers', () => {
      const text = lines(
        'environments:',
        '  - name: dev',
        '    paths: ["/apps/*/overlays/dev"]',
        '    from: registry',
        '    automerge: true',
        '  - name: staging',
        '    paths: ["apps/*/overlays/staging"]',
        '    from: dve',
        '    soak: 30',
        'images:',
        '  - name: ghcr.io/example/hello:1.2',
        '    policy: semver-range',
        'dryrun: true',
      );
      const result = parseRepoConfig(text, 'gitops/.github/escalator.yml');
      expect(result.ok).toBe(false);
      expect(formatProblems(result.ok ? [] : result.problems)).toBe(
        [
          'gitops/.github/escalator.yml:3:13: path "/apps/*/overlays/dev" is absolute (write it relative to the repository root: "apps/*/overlays/dev")',
          'gitops/.github/escalator.yml:5:5: unknown key "automerge" (did you mean "autoMerge"?)',
          'gitops/.github/escalator.yml:8:11: from names no environment: "dve" (did you mean "dev"?)',
          'gitops/.github/escalator.yml:9:11: soak must be a duration like 30m, found the number 30 (add a unit: 30m)',
          'gitops/.github/escalator.yml:11:11: image name "ghcr.io/example/hello:1.2" has a tag (remove ":1.2"; choose tags with tags: and policy:)',
          'gitops/.github/escalator.yml:12:13: policy semver-range needs a range (add a range, like range: "^1.2")',
          'gitops/.github/escalator.yml:13:1: unknown key "dryrun" (did you mean "dryRun"?)',
        ].join('\n'),
      );
    });

    it('quotes at most 80 characters of a long value, with its length, and suggests nothing for it', () => {
      const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(20_000)) as [string, string, string];
      const cut = (x: string) => `"${x.slice(0, 80)}…" (20,000 characters)`;
      const text = lines(
        'environments:',
        `  - name: ${a}`,
        '    paths: ["apps/*/overlays/dev"]',
        '    from: registry',
        `  - name: ${b}`,
        '    paths: ["apps/*/overlays/prod"]',
        `    from: ${c}`,
      );
      expect(problemsOf(text)).toEqual([
        {
          file: '.github/escalator.yml',
          line: 2,
          col: 11,
          path: 'environments[0].name',
          message: `invalid environment name ${cut(a)}`,
          hint: 'use letters, digits, "-" and "_" (at most 63), starting with a letter or digit',
        },
        {
          file: '.github/escalator.yml',
          line: 5,
          col: 11,
          path: 'environments[1].name',
          message: `invalid environment name ${cut(b)}`,
          hint: 'use letters, digits, "-" and "_" (at most 63), starting with a letter or digit',
        },
        {
          file: '.github/escalator.yml',
          line: 7,
          col: 11,
          path: 'environments[1].from',
          message: `from names no environment: ${cut(c)}`,
          hint: `use "registry" or one of: ${a.slice(0, 80)}…`,
        },
      ]);
    });

    it('lists at most ten environments when from names none of them', () => {
      const environments = Array.from({ length: 12 }, (_, i) => [
        `  - name: e${i}`,
        `    paths: ["p${i}"]`,
        `    from: ${i === 0 ? 'registry' : 'e0'}`,
      ]).flat();
      const [problem] = problemsOf(
        lines('environments:', ...environments, '  - name: last', '    paths: ["q"]', '    from: nowhere-at-all'),
      );
      expect(problem?.hint).toBe('use "registry" or one of: e0, e1, e2, e3, e4, e5, e6, e7, e8, e9 and 2 more');
    });

    it('formats a problem without a hint without parentheses', () => {
      expect(
        formatProblems([
          { file: 'f.yml', line: 2, col: 15, path: '', message: 'YAML syntax error: missing closing "quote' },
        ]),
      ).toBe('f.yml:2:15: YAML syntax error: missing closing "quote');
      expect(formatProblems([])).toBe('');
    });
  });

  describe('hostile sizes', () => {
    it('quotes at most 80 characters of a long key, value or alias in messages, paths and hints', () => {
      const long = (char: string) => char.repeat(50_000);
      const text = `environments:\n  - name: dev\n    paths: ["a"]\n    from: registry\n    ? ${long('k')}\n    : 1\nimages:\n  - name: x\n    policy: ${long('s')}\n  - ${long('n')}\n`;
      const result = parseRepoConfig(text);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.problems.length).toBeGreaterThanOrEqual(3);
      expect(result.problems.map((problem) => problem.message)).toContainEqual(
        expect.stringContaining('(50,000 characters)'),
      );
      const alias = parseRepoConfig(`environments: *${long('a')}\n`);
      const problems = [...(alias.ok ? [] : alias.problems), ...result.problems];
      for (const problem of problems) {
        expect(problem.message.length, problem.message.slice(0, 100)).toBeLessThan(300);
        expect(problem.path.length).toBeLessThan(300);
        expect((problem.hint ?? '').length).toBeLessThan(300);
      }
    });

    it('refuses a file over 256 KB before parsing it', () => {
      const result = parseRepoConfig(`environments: []\n${'# padding\n'.repeat(30_000)}`);
      expect(result).toEqual({
        ok: false,
        problems: [
          {
            file: '.github/escalator.yml',
            line: 1,
            col: 1,
            path: '',
            message: 'the file is 293.0 KB, over the limit of 256.0 KB for one YAML file; split it into smaller files',
          },
        ],
      });
    });
  });

  describe('whatever the text', () => {
    const fragments = fc.constantFrom(
      'environments:',
      '  - name: dev',
      '    paths: ["a/*"]',
      '    from: registry',
      '    from: dev',
      '- x',
      'images:',
      '  - name: x',
      '    policy: semver-range',
      '    range: "^1"',
      'diff: {',
      '"',
      "'",
      '&a',
      '*a',
      '---',
      '\t',
      ': :',
      '? x',
      'labels: [',
      '    soak: 1h',
      'version: 1',
      'dryRun: maybe',
      '%YAML 1.2',
      '!!binary',
      '#',
      '',
      '  ',
      '\r',
    );
    const texts = fc.oneof(
      fc.string(),
      fc.array(fragments, { maxLength: 12 }).map((parts) => parts.join('\n')),
    );

    it('never throws and positions every problem inside the file', () => {
      fc.assert(
        fc.property(texts, (text) => {
          const result = parseRepoConfig(text);
          if (result.ok) return;
          expect(result.problems.length).toBeGreaterThan(0);
          const lineCount = text.split('\n').length;
          for (const problem of result.problems) {
            expect(problem.line).toBeGreaterThanOrEqual(1);
            expect(problem.line).toBeLessThanOrEqual(lineCount);
            expect(problem.col).toBeGreaterThanOrEqual(1);
            expect(problem.message).not.toBe('');
          }
        }),
        { numRuns: 400 },
      );
    });
  });
});
