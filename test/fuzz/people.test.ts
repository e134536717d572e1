import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { planBump, renderBumpBody, renderBumpTitle } from '../../src/planners/bump-plan.js';
import { parseCommand } from '../../src/planners/commands.js';
import { cell, code, escapeText } from '../../src/planners/markdown.js';
import { planPromotion } from '../../src/planners/promotion-plan.js';
import { escalatorMarker, parseMarker, renderMarker, type PullMarker } from '../../src/planners/pull-marker.js';
import { activeCharacters, splitLines, structuralDifferences } from './support/markdown-check.js';

/**
 * Hostile people: forged pull request markers, markdown injection through file names and
 * values, `/escalator` commands built to break parsing, and repository configuration that
 * tries to point the app somewhere.
 */
const runs = Math.round(300 * Number(process.env.FUZZ_SCALE ?? 1));

/** Pieces of markdown, HTML and mention syntax; hostile strings are made of these and noise. */
const injections = [
  '`',
  '``',
  '```',
  '</details>',
  '<details><summary>x</summary>',
  '<img src=x onerror=alert(1)>',
  '@org/team',
  '@everyone',
  '[link](javascript:alert(1))',
  '![i](https://evil.example.com/x.png)',
  '**b**',
  '_i_',
  '~~s~~',
  '# h',
  '| a | b |',
  '\\',
  '\\`',
  '-->',
  '<!--',
  '--!>',
  '<!-- escalator:v1 {"kind":"bump","images":[]} -->',
  '&lt;',
  '&#60;',
  '\n',
  '\r\n',
  '\n\n',
  '\r',
  '\r\r',
  '\\|',
  '\\\\|',
  '||',
  '\u2028',
  '\u0000',
  '\t',
  '    ',
  '> q',
  '- i',
  '1. i',
  '---',
  '===',
  'https://evil.example.com/a',
  'www.evil.com',
  ':+1:',
  '#1',
  '${{ secrets.TOKEN }}',
  '{{ .Values.x }}',
  '<script>alert(1)</script>',
  '</sub>',
  '\u202e',
  'e\u0301',
  '</td></tr></table>',
  '<a href="https://evil">x</a>',
];
const hostileText = fc
  .array(
    fc.oneof(fc.constantFrom(...injections), fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));
/** Plain stand-ins of the same role: no markdown, no line breaks. */
const plain = 'plain';
/** The plain stand-in of a value: empty stays empty, so both renderings take the same branches. */
const stand = (text: string): string => (text === '' ? '' : plain);

describe('markdown helpers', () => {
  it('code() holds any text in one code span on one line', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const rendered = code(text);
        expect(splitLines(rendered)).toHaveLength(1);
        expect(activeCharacters(rendered)).toBe('«code»');
      }),
      { numRuns: runs },
    );
  });

  it('escapeText() leaves no markdown or HTML character active and no line break', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const rendered = escapeText(text);
        expect(splitLines(rendered)).toHaveLength(1);
        expect(activeCharacters(rendered)).toBe('');
        expect(rendered).not.toMatch(/[<>]/);
      }),
      { numRuns: runs },
    );
  });

  it('cell(code()) and cell(escapeText()) keep a table row at its cells', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(structuralDifferences(`| ${cell(code(text))} | x |`, `| ${cell(code(plain))} | x |`)).toEqual([]);
        expect(
          structuralDifferences(`| ${cell(escapeText(text))} | x |`, `| ${cell(escapeText(stand(text)))} | x |`),
        ).toEqual([]);
      }),
      { numRuns: runs },
    );
  });

  it('code() and escapeText() treat a lone CR as the line ending it is (src/planners/markdown.ts)', () => {
    // "x\r\r<img …>": the blank line ends the code span's paragraph and the tag is live HTML.
    expect(splitLines(code('x\r\r<img src=x onerror=alert(1)>'))).toHaveLength(1);
    expect(splitLines(escapeText('x\r===\r'))).toHaveLength(1);
  });

  it('code() of the empty string is a code span, not two backticks that pair with later ones (src/planners/markdown.ts)', () => {
    expect(activeCharacters(code(''))).toBe('«code»');
  });

  it('cell(code()) keeps a backslash-pipe inside its code span: "\\|" becomes "\\\\|", an escaped backslash and a live delimiter (src/planners/markdown.ts)', () => {
    // From a forged marker's tag: the code span is cut in three cells and the middle one is raw HTML.
    const tag = '\\| <img src=x onerror=alert(1)> |';
    expect(structuralDifferences(`| ${cell(code(tag))} | x |`, `| ${cell(code(plain))} | x |`)).toEqual([]);
  });

  it('cell(escapeText()) keeps a | inside its cell (escapeText makes it \\|, cell makes that \\\\|, a delimiter)', () => {
    expect(structuralDifferences(`| ${cell(escapeText('a|b'))} | x |`, `| ${cell(escapeText(plain))} | x |`)).toEqual(
      [],
    );
  });
});

describe('forged pull request markers', () => {
  const value = fc.oneof(hostileText, fc.jsonValue({ maxDepth: 2 }));
  const forgedObject = fc.record(
    {
      kind: fc.oneof(fc.constantFrom('bump', 'promote'), value),
      environment: value,
      app: value,
      images: fc.oneof(
        fc.array(
          fc.oneof(
            fc.record({ repository: value, tag: value, digest: value }, { requiredKeys: ['repository', 'tag'] }),
            value,
          ),
          { maxLength: 3 },
        ),
        value,
      ),
      sources: fc.array(value, { maxLength: 3 }),
      relay: fc.constantFrom('https://evil.example.com/hook', { url: 'http://169.254.169.254/' }),
    },
    { requiredKeys: [] },
  );
  /** A marker of the right shape, with hostile text in every string: the half of the bodies that parse. */
  const short = hostileText.filter((text) => text.length <= 512);
  const wellTyped = fc.record({
    kind: fc.constantFrom('bump', 'promote'),
    environment: short,
    app: short,
    images: fc.array(
      fc.record({ repository: short, tag: short, digest: short }, { requiredKeys: ['repository', 'tag'] }),
      { maxLength: 3 },
    ),
    sources: fc.array(short, { maxLength: 3 }),
  });
  const splices = fc.constantFrom('-->', ' --> <img src=x onerror=alert(1)> ', '} -->', '"}');
  /** A body a person could write: text, a marker (well typed, or of any shape with raw `-->` spliced into its JSON), more markers. */
  const forgedBody = fc
    .tuple(
      hostileText,
      fc.oneof(fc.tuple(wellTyped, fc.constant('')), fc.tuple(forgedObject, splices)),
      fc.nat(),
      fc.boolean(),
      hostileText,
    )
    .map(([before, [object, splice], at, twice, after]) => {
      const json = JSON.stringify(object).replace(/^\{/, '{"__proto__":{"polluted":true},');
      const cut = at % (json.length + 1);
      const marker = `<!-- escalator:v1 ${json.slice(0, cut)}${splice}${json.slice(cut)} -->`;
      return `${before}\n${marker}${twice ? `\n<!-- escalator:v1 {"kind":"promote","environment":"prod","app":"x","images":[]} -->` : ''}\n${after}`;
    });

  it('parse to null or to a marker whose rendering is one closed comment that round-trips', () => {
    let parsed = 0;
    fc.assert(
      fc.property(forgedBody, (body) => {
        const marker = parseMarker(body);
        if (marker === null) return;
        parsed++;
        expect(['bump', 'promote']).toContain(marker.kind);
        expect(Array.isArray(marker.images)).toBe(true);
        const rendered = renderMarker(marker);
        expect(splitLines(rendered)).toHaveLength(1);
        expect(rendered.indexOf('-->')).toBe(rendered.length - 3);
        expect(rendered.slice(4, -3)).not.toMatch(/--|<!--/);
        expect(parseMarker(`text ${rendered} text`)).toEqual(marker);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: runs },
    );
    // The round-trip above ran on real markers, not only on bodies that parse to null.
    expect(parsed).toBeGreaterThan(runs / 5);
  });

  it('with string fields and images on registries without a link, render into an inert bump body', () => {
    const stringMarker = fc.record({
      kind: fc.constantFrom<'bump' | 'promote'>('bump', 'promote'),
      environment: hostileText,
      app: hostileText,
      images: fc.array(
        fc.record({
          repository: hostileText.map((text) => `registry.example.com/${text}`),
          tag: hostileText,
          digest: hostileText,
        }),
        { minLength: 1, maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(stringMarker, (forged) => {
        const marker = parseMarker(`x ${renderMarker(forged)}`) as PullMarker;
        const standIn: PullMarker = {
          kind: marker.kind,
          environment: stand(marker.environment),
          app: stand(marker.app),
          images: marker.images.map((image) => ({
            repository: `registry.example.com/${plain}`,
            tag: plain,
            digest: stand(image.digest ?? ''),
          })),
        };
        const hostileBody = renderBumpBody(marker, [{ path: `x${marker.app}`, reason: marker.environment, line: 3 }]);
        const plainBody = renderBumpBody(standIn, [{ path: plain, reason: stand(marker.environment), line: 3 }]);
        expect(structuralDifferences(withoutMarkerLine(hostileBody), withoutMarkerLine(plainBody))).toEqual([]);
        expect(typeof renderBumpTitle(marker)).toBe('string');
      }),
      { numRuns: runs },
    );
  });

  describe('in the body of a merged pull request', () => {
    const body = `Promote\n${renderMarker({ kind: 'promote', environment: 'prod', app: 'hello', images: [{ repository: 'ghcr.io/example/hello', tag: '6.6.6' }], sources: ['#1'] })}`;
    const ours = {
      body,
      user: { type: 'Bot', login: 'escalator[bot]' },
      head: { ref: 'escalator/promote/prod/hello', repo: { full_name: 'o/r' } },
    };
    it.each([
      ['a person', { ...ours, user: { type: 'User', login: 'escalator[bot]' } }],
      ['another App', { ...ours, user: { type: 'Bot', login: 'other[bot]' } }],
      ['no user (a deleted account)', { ...ours, user: null }],
      ["a branch that is not Escalator's", { ...ours, head: { ...ours.head, ref: 'feature/escalator/promote' } }],
      ['a fork', { ...ours, head: { ...ours.head, repo: { full_name: 'someone/r' } } }],
      ['a fork that was deleted', { ...ours, head: { ...ours.head, repo: null } }],
    ])('is not trusted when the pull request comes from %s', (_who, pull) => {
      expect(escalatorMarker(pull, 'o/r', 'escalator[bot]')).toBeNull();
    });
    it('is trusted from this App on an escalator/ branch of the same repository', () => {
      expect(escalatorMarker(ours, 'o/r', 'escalator[bot]')).toEqual({
        kind: 'promote',
        environment: 'prod',
        app: 'hello',
        images: [{ repository: 'ghcr.io/example/hello', tag: '6.6.6' }],
        sources: ['#1'],
      });
    });
  });

  it('never make the next bump throw: a marker with images:[null] is refused by parseMarker (src/planners/pull-marker.ts)', () => {
    const marker = parseMarker('<!-- escalator:v1 {"kind":"bump","environment":"dev","app":"a","images":[null]} -->');
    expect(marker).toBeNull();
    expect(() => planBump({ environment: 'dev', app: 'a', files: [], images: [], existing: marker })).not.toThrow();
  });

  it('keep a forged ghcr.io repository out of the link it is put in (src/planners/bump-plan.ts registryLink)', () => {
    const forged =
      '<!-- escalator:v1 {"kind":"bump","environment":"dev","app":"a","images":[{"repository":"ghcr.io/a/b) @example/everyone [x](https://evil.example.com) (","tag":"1"}]} -->';
    const body = withoutMarkerLine(
      planBump({ environment: 'dev', app: 'a', files: [], images: [], existing: parseMarker(forged) }).body,
    );
    // Not a name of the reference grammar: no link is built from it, and it stays inside a code span.
    expect(body).not.toContain('](https://github.com/a/');
    expect(body).toContain('`ghcr.io/a/b) @example/everyone [x](https://evil.example.com) (`');
  });
});

/** The marker, the body's last line, is an HTML comment checked on its own above; the rest is compared. */
function withoutMarkerLine(body: string): string {
  const lines = body.split('\n');
  const last = lines.length - 2;
  expect(lines[last]).toMatch(/^<!-- escalator:v1 \{/);
  lines[last] = '<!-- marker -->';
  return lines.join('\n');
}

describe('markdown injection through bump and promotion pull requests', () => {
  const kustomization = (tag: string) => `images:\n- name: ghcr.io/example/hello\n  newTag: ${tag}\n`;
  const duplicate = 'images:\n- name: ghcr.io/example/hello\n  newTag: 1.0.0\n  newTag: 1.0.1\n';

  it('planBump keeps file names, environment and app names, and forged marker values inert', () => {
    fc.assert(
      fc.property(hostileText, hostileText, hostileText, hostileText, (dir, environment, app, tag) => {
        const render = (d: string, env: string, a: string, t: string) =>
          planBump({
            environment: env,
            app: a,
            files: [
              { path: `apps/${d}/overlays/dev/kustomization.yaml`, text: duplicate },
              { path: `apps/hello/overlays/dev/kustomization.yaml`, text: kustomization('1.0.0') },
            ],
            images: [
              {
                image: { repository: 'ghcr.io/example/hello', tag: '2.0.0' },
                policy: { policy: 'newest', pinDigest: false },
              },
            ],
            existing: {
              kind: 'bump',
              environment: env,
              app: a,
              images: [{ repository: `registry.example.com/${t}`, tag: t }],
            },
          }).body;
        expect(
          structuralDifferences(
            withoutMarkerLine(render(dir, environment, app, tag)),
            withoutMarkerLine(render(plain, stand(environment), stand(app), plain)),
          ),
        ).toEqual([]);
      }),
      { numRuns: runs },
    );
  });

  it('planBump keeps a hostile image reference from a registry event inert in the refusal it causes', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const render = (repository: string, tag: string) =>
          planBump({
            environment: 'dev',
            app: 'hello',
            files: [{ path: 'apps/hello/overlays/dev/kustomization.yaml', text: kustomization('1.0.0') }],
            images: [{ image: { repository, tag }, policy: { policy: 'newest', pinDigest: false } }],
          }).body;
        // A tag that is not a Docker tag is refused with a reason quoting it.
        expect(
          structuralDifferences(
            withoutMarkerLine(render('ghcr.io/example/hello', `${text}!`)),
            withoutMarkerLine(render('ghcr.io/example/hello', `${plain}!`)),
          ),
        ).toEqual([]);
      }),
      { numRuns: runs },
    );
  });

  it('planPromotion keeps app names, sources, gates and environment names inert', () => {
    fc.assert(
      // `#12` in provenance is meant to link; any other source is escaped.
      fc.property(
        hostileText,
        hostileText.filter((text) => text !== ''),
        hostileText.map((text) => `x${text}`),
        hostileText,
        hostileText,
        (app, missing, source, gate, environment) => {
          const render = (a: string, m: string, s: string, g: string, env: string) =>
            planPromotion({
              source: env,
              target: env,
              app: '',
              apps: [
                {
                  app: a,
                  sourceFiles: [{ path: `apps/${a}/overlays/dev/kustomization.yaml`, text: kustomization('2.0.0') }],
                  targetFiles: [{ path: `apps/${a}/overlays/prod/kustomization.yaml`, text: kustomization('1.0.0') }],
                },
                {
                  app: m,
                  sourceFiles: [{ path: `apps/${m}/overlays/dev/kustomization.yaml`, text: kustomization('2.0.0') }],
                  targetFiles: [],
                },
                {
                  app: 'dup',
                  sourceFiles: [{ path: `apps/dup/overlays/dev/kustomization.yaml`, text: kustomization('2.0.0') }],
                  targetFiles: [{ path: `apps/${a}/overlays/prod/kustomization.yaml`, text: `${duplicate}` }],
                },
              ],
              sources: [s, '#12'],
              gates: [{ name: g, state: 'pending', detail: g }],
            }).body;
          expect(
            structuralDifferences(
              withoutMarkerLine(render(app, missing, source, gate, environment)),
              withoutMarkerLine(render(stand(app), plain, plain, stand(gate), stand(environment))),
            ),
          ).toEqual([]);
        },
      ),
      { numRuns: runs },
    );
  });

  it('planPromotion keeps a | in an app name inside its table cell (src/planners/promotion-plan.ts)', () => {
    const render = (a: string) =>
      planPromotion({
        source: 'dev',
        target: 'prod',
        app: '',
        apps: [
          {
            app: a,
            sourceFiles: [{ path: 'apps/x/overlays/dev/kustomization.yaml', text: kustomization('2.0.0') }],
            targetFiles: [{ path: 'apps/x/overlays/prod/kustomization.yaml', text: kustomization('1.0.0') }],
          },
        ],
      }).body;
    expect(structuralDifferences(render('a|b'), render('ab'))).toEqual([]);
  });
});

describe('/escalator commands', () => {
  const metacharacters = fc.constantFrom(
    ';',
    '&&',
    '|',
    '`id`',
    '$(id)',
    '${IFS}',
    '>',
    '<',
    '*',
    '?',
    '~',
    '\\',
    '"',
    "'",
    '\u0000',
    '\u200b',
    'ø',
    'é',
    '環境',
    '🚀',
    '\u202e',
    '%00',
    '../..',
    '--',
    '-rf',
  );
  const name = fc.constantFrom('hold', 'release', 'promote', 'rollback', 'plan', 'diff', 'help');
  const hostileArgument = fc.oneof(
    fc
      .tuple(fc.stringMatching(/^[a-z]{0,5}$/), metacharacters, fc.stringMatching(/^[a-z]{0,5}$/))
      .map(([a, m, b]) => `${a}${m}${b}`),
    fc.integer({ min: 64, max: 200_000 }).map((n) => 'a'.repeat(n)),
  );

  it('refuses any argument with shell metacharacters, non-ASCII letters, or more than 63 characters, and never throws', () => {
    fc.assert(
      fc.property(
        name,
        fc.array(fc.oneof(hostileArgument, fc.stringMatching(/^[a-z]{1,8}$/)), { minLength: 1, maxLength: 3 }),
        (command, args) => {
          fc.pre(args.some((arg) => !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(arg)));
          const parsed = parseCommand(`/escalator ${command} ${args.join(' ')}`);
          // Whitespace inside an argument splits it; every word that is not a plain name is refused.
          if (
            args.some((arg) =>
              arg.split(/\s+/).some((word) => word !== '' && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(word)),
            )
          )
            expect(parsed).toMatchObject({ ok: false });
        },
      ),
      { numRuns: runs },
    );
  });

  it('answers any comment body with null, a known command, or a refusal, never throwing', () => {
    const body = fc
      .array(
        fc.oneof(
          fc.string(),
          fc.constantFrom(
            '/escalator',
            '/escalator promote prod',
            '```',
            '~~~',
            '> /escalator plan',
            '\r\n',
            '\n',
            '/ESCALATOR plan',
            '/escalator\u00a0plan',
            '/escalatorplan',
          ),
        ),
        { maxLength: 8 },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(body, (text) => {
        const parsed = parseCommand(text);
        if (parsed === null) return;
        if (parsed.ok) {
          expect(['hold', 'release', 'promote', 'rollback', 'plan', 'diff', 'help']).toContain(parsed.command.name);
          for (const value of Object.values(parsed.command).slice(1))
            expect(value).toMatch(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/);
        } else expect(parsed.message.length).toBeGreaterThan(0);
      }),
      { numRuns: runs },
    );
  });

  it('ignores commands in quotes and fenced code, and reads only the first command', () => {
    expect(parseCommand('> /escalator promote prod')).toBeNull();
    expect(parseCommand('```\n/escalator promote prod\n```')).toBeNull();
    expect(parseCommand('/escalator plan\n/escalator promote prod')).toEqual({ ok: true, command: { name: 'plan' } });
    expect(parseCommand('/escalator promote prod;rm -rf /')).toEqual({
      ok: false,
      message: '"prod;rm" is not an environment or app name',
    });
  });

  it('keeps its refusal short for a 100,000-character command name (src/planners/commands.ts echoes it whole)', () => {
    const parsed = parseCommand(`/escalator ${'x'.repeat(100_000)}`);
    expect(parsed).toMatchObject({ ok: false });
    expect((parsed as { message: string }).message.length).toBeLessThan(1_000);
  });
});

describe('repository configuration that tries to point the app anywhere', () => {
  const base = { environments: [{ name: 'dev', paths: ['apps/*/overlays/dev'], from: 'registry' }] };
  const toYaml = (value: unknown): string => JSON.stringify(value);
  const url = fc.constantFrom(
    'https://evil.example.com/hook',
    'http://169.254.169.254/latest/meta-data/',
    'file:///etc/passwd',
    'ssh://git@evil/x',
    '//evil.example.com',
    'gopher://x',
    'https://user:pass@10.0.0.1:8080/x?y=1',
  );
  const key = fc.constantFrom(
    'relay',
    'webhook',
    'webhooks',
    'url',
    'baseUrl',
    'apiUrl',
    'githubApiUrl',
    'targets',
    'agents',
    'argocd',
    'flux',
    'callback',
    'notify',
    'registry',
    'proxy',
    'endpoint',
    'helmRepo',
    'kustomize',
  );

  it('refuses an unknown key anywhere, naming it', () => {
    const where = fc.constantFrom<Array<string | number>>([], ['environments', 0], ['diff'], ['images', 0]);
    fc.assert(
      fc.property(key, url, where, (name, value, at) => {
        const config = structuredClone({ ...base, images: [{ name: 'ghcr.io/example/hello' }], diff: {} }) as Record<
          string,
          unknown
        >;
        let node = config as Record<string | number, unknown>;
        for (const segment of at) node = node[segment] as Record<string | number, unknown>;
        node[name] = value;
        const result = parseRepoConfig(toYaml(config));
        expect(result.ok).toBe(false);
        if (result.ok) return;
        const path = [...at.map((segment) => (typeof segment === 'number' ? `[${segment}]` : segment)), name]
          .join('.')
          .replace(/\.\[/g, '[');
        expect(result.problems).toContainEqual(expect.objectContaining({ path, message: `unknown key "${name}"` }));
      }),
      { numRuns: runs },
    );
  });

  it('refuses a URL in every field that names a path, an environment, an image, a reviewer or a range', () => {
    const fields: Array<[string, (value: string) => unknown, string]> = [
      [
        'paths',
        (value) => ({ environments: [{ name: 'dev', paths: [value], from: 'registry' }] }),
        'environments[0].paths[0]',
      ],
      [
        'name',
        (value) => ({ environments: [{ name: value, paths: ['a'], from: 'registry' }] }),
        'environments[0].name',
      ],
      [
        'from',
        (value) => ({
          environments: [
            { name: 'dev', paths: ['a'], from: 'registry' },
            { name: 'prod', paths: ['b'], from: value },
          ],
        }),
        'environments[1].from',
      ],
      [
        'reviewers',
        (value) => ({ environments: [{ name: 'dev', paths: ['a'], from: 'registry', reviewers: [value] }] }),
        'environments[0].reviewers[0]',
      ],
      ['image name', (value) => ({ ...base, images: [{ name: value }] }), 'images[0].name'],
      [
        'range',
        (value) => ({ ...base, images: [{ name: 'ghcr.io/example/hello', policy: 'semver-range', range: value }] }),
        'images[0].range',
      ],
      ['diff paths', (value) => ({ ...base, diff: { paths: [value] } }), 'diff.paths[0]'],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...fields), url, ([, build, path], value) => {
        const result = parseRepoConfig(toYaml(build(value)));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.problems.map((problem) => problem.path)).toContain(path);
      }),
      { numRuns: runs },
    );
  });

  it('accepts a URL only where it is inert text: a label name, a tags pattern, a directory named like a scheme', () => {
    expect(parseRepoConfig(toYaml({ ...base, labels: ['https://evil.example.com'] })).ok).toBe(true);
    // One path segment "javascript:alert(1)": matched against file paths in the repository, nothing else.
    expect(
      parseRepoConfig(toYaml({ environments: [{ name: 'dev', paths: ['javascript:alert(1)'], from: 'registry' }] })).ok,
    ).toBe(true);
    expect(
      parseRepoConfig(
        toYaml({ ...base, images: [{ name: 'ghcr.io/example/hello', tags: 'https://evil.example.com' }] }),
      ).ok,
    ).toBe(true);
  });

  it('never resolves YAML tags: !include and friends stay strings, and a URL in from is still refused', () => {
    const result = parseRepoConfig(
      'environments:\n  - name: dev\n    paths: [a]\n    from: !include https://evil.example.com/x\n',
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.path)).toContain('environments[0].from');
    const ok = parseRepoConfig(
      'environments:\n  - name: dev\n    paths: [a]\n    from: registry\nlabels: [!!js/function "function(){}"]\n',
    );
    expect(ok.ok && ok.config.labels).toEqual(['function(){}']);
  });

  // JavaScript's backtracking engine took 0.5 s on a 27-character tag against ^(a|a)+$ and 2 s
  // on a 29-character one, doubling with each character; a tag may have 128. Patterns are RE2
  // now: the pattern is a valid one, and matching is linear in the tag. Run in a child process so
  // a regression is killed at the bound instead of hanging the test run.
  it(
    'matches ^(a|a)+$ against 128-character tags correctly within the bound (RE2; src/planners/tag-policy.ts)',
    { timeout: 30_000 },
    async () => {
      const parsed = parseRepoConfig(
        toYaml({ ...base, images: [{ name: 'ghcr.io/example/hello', tags: '^(a|a)+$' }] }),
      );
      expect(parsed.ok).toBe(true);
      const tagPolicy = new URL('../../src/planners/tag-policy.ts', import.meta.url).href;
      const script = [
        `import { acceptsTag } from ${JSON.stringify(tagPolicy)};`,
        "const policy = { policy: 'newest', pinDigest: false, tags: '^(a|a)+$' };",
        "const tags = ['a'.repeat(127) + 'b', 'a'.repeat(128), 'b' + 'a'.repeat(127), 'a'.repeat(64) + '!' + 'a'.repeat(63)];",
        'console.log(JSON.stringify(tags.map((tag) => acceptsTag(policy, tag).ok)));',
      ].join('\n');
      const answer = await answerWithin(script, BOUND_MS);
      expect(answer).toEqual({ outcome: 'answered', stdout: '[false,true,false,false]\n' });
    },
  );
});

/** The bound of the hostile-content tests: a third of the 30 s job lock. */
const BOUND_MS = 10_000;

/** Runs an ES module script (TypeScript imports through tsx) in a child process, killed when it overruns `boundMs`. */
function answerWithin(
  script: string,
  boundMs: number,
): Promise<{ outcome: 'answered' | 'killed' | 'failed'; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, boundMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(
        killed
          ? { outcome: 'killed', stdout }
          : code === 0
            ? { outcome: 'answered', stdout }
            : { outcome: 'failed', stdout: `${stdout}${stderr}` },
      );
    });
  });
}
