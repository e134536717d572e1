import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APP_OF_APPS_NOTE,
  buildReport,
  diffTarget,
  diffValuesFiles,
  GITHUB_BODY_LIMIT,
  planCommentLayout,
  renderCheckSummary,
  renderComment,
  scrubText,
  secretStringsFromSources,
  notRenderedDiff,
  toJsonReport,
  valuesImageChanges,
  withAppOfAppsNote,
  type DiffReport,
  type RenderOutcome,
  type SectionLevel,
} from '../../src/planners/diff/index.js';
import { unbalancedMarkdown } from './support/case-repo.js';

const SHA_BASE = 'a'.repeat(40);
const SHA_HEAD = 'b'.repeat(40);
const context = { baseSha: SHA_BASE, headSha: SHA_HEAD, repository: 'example/gitops' };

function configMaps(prefix: string, count: number, side: string, length = 12): RenderOutcome {
  const docs = Array.from({ length: count }, (_, index) => {
    const changed = (line: number): boolean => (length === 12 ? line === 1 || line === 10 : line % 4 === 1);
    const lines = Array.from(
      { length },
      (_, line) => `    line-${line}=${changed(line) ? `${side}-${index}` : 'same'}`,
    ).join('\n');
    return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${prefix}-${index}\ndata:\n  conf: |\n${lines}\n`;
  });
  return { status: 'ok', yaml: docs.join('---\n') };
}

function report(targets: Array<[string, number]>, length = 12): DiffReport {
  return buildReport({
    baseSha: SHA_BASE,
    headSha: SHA_HEAD,
    targets: targets.map(([id, count]) =>
      diffTarget(
        { id, kind: 'plain', dir: id },
        configMaps(id, count, 'base', length),
        configMaps(id, count, 'head', length),
      ),
    ),
  });
}

describe('renderComment size budget', () => {
  const big = report([
    ['huge', 500],
    ['medium', 40],
    ['small', 2],
  ]);

  it('steps the 500-object target down level by level (full → first hunks → objects → one line) and always fits', () => {
    const steps = (maxChars: number) =>
      planCommentLayout(big, { ...context, maxChars })
        .steps.filter(([id]) => id === 'huge')
        .map(([, level]) => level);
    expect(steps(65_000)).toEqual(['hunks', 'objects']);
    expect(steps(5_000)).toEqual(['hunks', 'objects', 'line']);
    for (let budget = 65_000; budget >= 4_000; budget = Math.floor(budget * 0.8)) {
      const body = renderComment(big, { ...context, maxChars: budget });
      expect(body.length).toBeLessThanOrEqual(budget);
      expect(unbalancedMarkdown(body)).toBeUndefined();
    }
  });

  it('shows a mid-size target at every level as the budget shrinks', () => {
    // Objects of 80 lines, every fourth changed: one long hunk each, which the first-hunk level cuts.
    const mid = report([['mid', 20]], 80);
    const seen = new Set<SectionLevel>();
    for (let budget = 65_000; budget >= 1_000; budget -= 500)
      seen.add(planCommentLayout(mid, { ...context, maxChars: budget }).levels.get('mid') ?? 'line');
    expect([...seen]).toEqual(['full', 'hunks', 'objects', 'line']);
  });

  it('steps the largest section down first and keeps small targets whole', () => {
    const layout = planCommentLayout(big, context);
    expect(layout.levels.get('small')).toBe('full');
    expect(layout.levels.get('medium')).toBe('full');
    expect(layout.levels.get('huge')).toBe('objects');
  });

  it('keeps the header, summary, table and footer at any budget, and leaves out sections only when one line each is too much', () => {
    const many = report(
      Array.from({ length: 140 }, (_, index): [string, number] => [
        `apps/app-${String(index).padStart(3, '0')}/overlays/prod`,
        30,
      ]),
    );
    const body = renderComment(many, { ...context, maxChars: 20_000 });
    expect(body.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(body).toContain('### Rendered manifest diff');
    expect(body).toContain('| Target | Kind | Result |');
    expect(body).toContain('<sub>Escalator checked 140 targets');
    expect(body).toMatch(/…and \d+ more changed targets? not shown/);
    expect(unbalancedMarkdown(body)).toBeUndefined();
  });

  it('steps from full diffs to 30 lines gradually: lines the budget has room for are shown, never "0 more hunks"', () => {
    const wide = report([['wide', 20]], 80);
    const full = renderComment(wide, context).length;
    const lines = (maxChars: number) => planCommentLayout(wide, { ...context, maxChars }).hunkLines.get('wide');
    // One 103-line hunk per object: 60 lines fit just under the full size, 30 at half of it.
    expect(lines(full - 100)).toBe(60);
    expect(lines(Math.floor(full * 0.5))).toBe(30);
    const body = renderComment(wide, { ...context, maxChars: full - 100 });
    expect(body.length).toBeLessThanOrEqual(full - 100);
    expect(body).toContain('more lines of this hunk not shown');
    expect(body).not.toContain('0 more hunks');
  });

  it('is deterministic', () => {
    expect(renderComment(report([['huge', 500]]), context)).toBe(renderComment(report([['huge', 500]]), context));
  });
});

describe('renderComment for arbitrary repository text', () => {
  const text = fc.string({
    unit: fc.constantFrom(
      '`',
      '<',
      '>',
      '/',
      'details',
      '@',
      '|',
      '*',
      '_',
      '[',
      ']',
      '(',
      ')',
      '!',
      '\n',
      ' ',
      'a',
      '~',
      '&',
      '#',
      '-',
      '\\',
    ),
    maxLength: 40,
  });
  it('stays balanced, under the limit, and never lets text out of a code span or fence', () => {
    fc.assert(
      fc.property(text, text, text, (name, value, dir) => {
        const yaml = (v: string) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${JSON.stringify(name || 'x')}\ndata:\n  k: ${JSON.stringify(v)}\n`;
        const target = diffTarget(
          { id: dir || 'd', kind: 'plain', dir: dir || 'd' },
          { status: 'ok', yaml: yaml(value) },
          { status: 'ok', yaml: yaml(`${value}!`) },
        );
        const body = renderComment(buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [target] }), context);
        expect(unbalancedMarkdown(body)).toBeUndefined();
        // Outside fences, no raw tag from the repository survives: every `<` is ours or an entity.
        const outside = body.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
        const tags = outside.match(/<\/?[a-z]+[^>`\n]*>/g) ?? [];
        for (const tag of tags)
          expect([
            '<details>',
            '</details>',
            '<summary>',
            '</summary>',
            '<code>',
            '</code>',
            '<sub>',
            '</sub>',
            '<br>',
          ]).toContain(tag);
      }),
      { numRuns: 150 },
    );
  });
});

describe('comment states', () => {
  it('says "No rendered changes as of <sha>" when nothing changed', () => {
    const unchanged = buildReport({
      baseSha: SHA_BASE,
      headSha: SHA_HEAD,
      targets: [diffTarget({ id: 'a', kind: 'plain', dir: 'a' }, configMaps('a', 1, 'x'), configMaps('a', 1, 'x'))],
    });
    expect(renderComment(unchanged, context)).toContain(
      'No rendered changes as of `bbbbbbb`. 1 target checked, all unchanged.',
    );
    const none = buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [] });
    expect(renderComment(none, context)).toContain('No target reads the changed files.');
    expect(renderCheckSummary(none)).toMatchObject({
      conclusion: 'success',
      title: 'No target reads the changed files',
    });
  });

  it('fails the check when a target fails at head, not when it only failed at base', () => {
    const ok = configMaps('a', 1, 'x');
    const failed: RenderOutcome = { status: 'failed', message: 'boom' };
    const breaks = buildReport({
      baseSha: SHA_BASE,
      headSha: SHA_HEAD,
      targets: [diffTarget({ id: 'a', kind: 'kustomize', dir: 'a' }, ok, failed)],
    });
    expect(renderCheckSummary(breaks)).toMatchObject({
      conclusion: 'failure',
      title: '0 of 1 target changed · 1 target fails to render at head',
    });
    expect(breaks.targets[0]?.failure).toEqual({ side: 'head', breaks: true, message: 'boom' });
    const fixes = buildReport({
      baseSha: SHA_BASE,
      headSha: SHA_HEAD,
      targets: [diffTarget({ id: 'a', kind: 'kustomize', dir: 'a' }, failed, ok)],
    });
    expect(renderCheckSummary(fixes).conclusion).toBe('success');
    expect(fixes.targets[0]?.failure?.side).toBe('base');
    // The fixing PR shows what it will deploy: head's objects as added.
    expect(fixes.targets[0]).toMatchObject({ status: 'changed', counts: { added: 1 } });
    const fresh = buildReport({
      baseSha: SHA_BASE,
      headSha: SHA_HEAD,
      targets: [diffTarget({ id: 'n', kind: 'kustomize', dir: 'n' }, { status: 'absent' }, failed)],
    });
    expect(renderCheckSummary(fresh)).toMatchObject({
      conclusion: 'failure',
      title: '0 of 1 target changed · 1 new target fails to render',
    });
    expect(renderComment(fresh, context)).not.toContain('this PR breaks it');
  });

  it('never calls a target Escalator could not render "unchanged": not rendered at the top, in the short form too, and the check is neutral', () => {
    const values = [{ path: 'charts/api/values.yaml', text: 'tag: 1.0.0\n' }];
    const missing: RenderOutcome = { status: 'tool-missing', tool: 'helm', message: 'helm is missing', values };
    const chart = diffTarget({ id: 'charts/api', kind: 'helm', dir: 'charts/api' }, missing, missing);
    expect(chart).toMatchObject({
      status: 'not-rendered',
      notRendered: 'helm is not installed where Escalator renders',
    });
    expect(chart.counts).toMatchObject({ added: 0, changed: 0, removed: 0 });
    const unchanged = diffTarget(
      { id: 'a', kind: 'plain', dir: 'a' },
      configMaps('a', 1, 'x'),
      configMaps('a', 1, 'x'),
    );
    const short = buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [chart, unchanged] });
    expect(short.summary).toMatchObject({ targetsChecked: 2, targetsUnchanged: 1, targetsNotRendered: 1 });
    const body = renderComment(short, context);
    expect(body).not.toContain('all unchanged');
    expect(body.split('\n')[4]).toBe(
      'No rendered changes as of `bbbbbbb` in the 1 target rendered, but **1 not rendered**.',
    );
    expect(body).toContain('> - helm is not installed where Escalator renders: `charts/api`');
    expect(renderCheckSummary(short)).toMatchObject({
      conclusion: 'neutral',
      title: '0 of 2 targets changed · 1 not rendered',
    });

    // With a change elsewhere: the full form, the not-rendered block above the alerts.
    const changed = diffTarget({ id: 'b', kind: 'plain', dir: 'b' }, configMaps('b', 2, 'x'), configMaps('b', 1, 'x'));
    const full = renderComment(
      buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [chart, changed] }),
      context,
    );
    expect(full.indexOf('> [!IMPORTANT]')).toBeGreaterThan(0);
    expect(full.indexOf('> [!IMPORTANT]')).toBeLessThan(full.indexOf('> [!WARNING]'));
    expect(full).toContain('| `charts/api` | helm | **not rendered** |');
  });

  it('names the merge commit, or says there was none', () => {
    const r = report([['a', 1]]);
    expect(renderComment(r, { ...context, mergeCommit: true })).toContain(
      'the merge commit `bbbbbbb` of this pull request',
    );
    expect(renderComment(r, { ...context, mergeCommit: false })).toContain(
      'GitHub has no merge commit for this pull request',
    );
  });

  it('leaves run statistics out of the JSON', () => {
    const r = {
      ...report([['a', 1]]),
      stats: { totalMs: 1, toolMs: 1, checkoutMs: 1, renders: 1, renderCacheHits: 0, checkoutsMaterialized: 1 },
    };
    expect(toJsonReport(r)).not.toContain('totalMs');
    expect(JSON.parse(toJsonReport(r)).targets[0].objects[0]).toMatchObject({
      kind: 'ConfigMap',
      name: 'a-0',
      change: 'changed',
    });
  });
});

describe('secret scrubbing', () => {
  it('removes every known value, its base64 and its JSON-escaped form, longest first', () => {
    const secrets = secretStringsFromSources(
      ['k/kustomization.yaml', 'k/creds.env', 'k/key.pem', 'values.yaml', 'k/secret.yaml'],
      (path) =>
        ({
          'k/kustomization.yaml':
            'secretGenerator:\n  - name: s\n    literals: [password=CANARY-literal]\n    envs: [creds.env]\n    files: [tls.key=key.pem]\n',
          'k/creds.env': '# comment\nTOKEN=CANARY-env-token\n',
          'k/key.pem': '-----BEGIN KEY-----\nCANARY-pem-body\n-----END KEY-----\n',
          'values.yaml': 'db:\n  password: CANARY-values\n  host: db.example.com\n',
          'k/secret.yaml':
            'apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ndata: {a: Q0FOQVJZLWRhdGE=}\nstringData: {b: "CANARY-\\"quoted\\""}\n',
        })[path],
    );
    const text =
      'err: CANARY-literal, CANARY-env-token; CANARY-pem-body Q0FOQVJZLWRhdGE= CANARY-data CANARY-values CANARY-\\"quoted\\" host db.example.com';
    const scrubbed = scrubText(text, secrets);
    expect(scrubbed).not.toContain('CANARY');
    expect(scrubbed).not.toContain('Q0FOQVJZ');
    expect(scrubbed).toContain('db.example.com');
  });

  it('also scrubs credentials outside Secrets: URL passwords and env literals named like secrets', () => {
    const secrets = secretStringsFromSources(['d.yaml'], () =>
      [
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:',
        '        - name: c\n          env:',
        '            - {name: DATABASE_URL, value: "postgres://u:CANARY-url-pw@db:5432/x"}',
        '            - {name: API_TOKEN, value: CANARY-env-literal}',
        '            - {name: LOG_LEVEL, value: debug}',
      ].join('\n'),
    );
    const scrubbed = scrubText('kustomize: CANARY-url-pw CANARY-env-literal debug', secrets);
    expect(scrubbed).toBe('kustomize: [redacted] [redacted] debug');
  });

  it('scrubs failure messages in diffTarget', () => {
    const target = diffTarget(
      { id: 'a', kind: 'kustomize', dir: 'a' },
      { status: 'ok', yaml: '' },
      { status: 'failed', message: 'invalid literal source =CANARY-x1' },
      { secrets: ['CANARY-x1'] },
    );
    expect(target.failure?.message).toBe('invalid literal source =[redacted]');
  });
});

describe('reasons and what the short form names (issues 35 and 36)', () => {
  const reason = 'the chart podinfo >=1.0.0 <2 & co comes from the HelmRepository podinfo';

  it('writes a not-rendered reason as prose: backslash escapes in Markdown, entities only inside <summary>', () => {
    const skipped = notRenderedDiff({ id: 'flux:podinfo/podinfo', kind: 'helm', dir: 'apps' }, 'both', reason);
    skipped.values = diffValuesFiles([{ path: 'v.yaml', text: 'a: 1\n' }], [{ path: 'v.yaml', text: 'a: 2\n' }]);
    const body = renderComment(buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [skipped] }), context);
    expect(body).toContain('> - the chart podinfo \\>=1\\.0\\.0 \\<2 \\& co comes from the HelmRepository podinfo:');
    const summary = body.split('\n').find((line) => line.startsWith('<summary>')) ?? '';
    expect(summary).toContain('not rendered (the chart podinfo &#62;=1.0.0 &#60;2 &#38; co comes');
    expect(body.replace(summary, '')).not.toMatch(/&(gt|lt|amp|#\d+);/);
    expect(unbalancedMarkdown(body)).toBeUndefined();
  });

  it('names the helm that rendered in the short form, and shows image rows there', () => {
    const ok = (tag: string): RenderOutcome => ({
      status: 'ok',
      yaml: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {tag: "${tag}"}\n`,
      notes: ['Rendered with helm v3.17.3.'],
    });
    const rendered = diffTarget({ id: 'charts/a', kind: 'helm', dir: 'charts/a' }, ok('1'), ok('1'));
    const skipped = notRenderedDiff({ id: 'argocd:b', kind: 'helm', dir: 'argocd' }, 'both', 'its chart is elsewhere');
    skipped.images = valuesImageChanges(
      'argocd:b',
      [{ path: 'b.yaml', text: 'image: {repository: ghcr.io/example/b, tag: "1.0"}\n' }],
      [{ path: 'b.yaml', text: 'image: {repository: ghcr.io/example/b, tag: "1.1"}\n' }],
      { inOrder: true },
    );
    const short = renderComment(buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [rendered] }), context);
    expect(short.split('\n')[4]).toBe(
      'No rendered changes as of `bbbbbbb`. 1 target checked, all unchanged. Rendered with helm v3\\.17\\.3\\.',
    );
    const withImages = renderComment(
      buildReport({ baseSha: SHA_BASE, headSha: SHA_HEAD, targets: [rendered, skipped] }),
      context,
    );
    expect(withImages).toContain('**1 not rendered**');
    expect(withImages).toContain('| `ghcr.io/example/b` | `argocd:b`: `1.0` → `1.1` |');
  });

  it('gives an image row for a bump in the Helm values of a HelmRelease or an Application object', () => {
    const release = (tag: string): RenderOutcome => ({
      status: 'ok',
      yaml: `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: podinfo}\nspec:\n  values: {redis: {repository: public.ecr.aws/docker/library/redis, tag: ${tag}}}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  sources:\n    - {path: charts/web, helm: {values: "image:\\n  repository: ghcr.io/example/web\\n  tag: '${tag}'\\n"}}\n`,
    });
    const diff = diffTarget(
      { id: 'apps/staging', kind: 'kustomize', dir: 'apps/staging' },
      release('8.6.2'),
      release('8.6.3'),
    );
    expect(diff.images.map((image) => [image.object.kind, image.container, image.from, image.to])).toEqual([
      ['Application', 'spec.sources[0].helm.values.image', 'ghcr.io/example/web:8.6.2', 'ghcr.io/example/web:8.6.3'],
      [
        'HelmRelease',
        'spec.values.redis',
        'public.ecr.aws/docker/library/redis:8.6.2',
        'public.ecr.aws/docker/library/redis:8.6.3',
      ],
    ]);
  });

  it('takes a release values in the order given: a later file wins, whatever its name', () => {
    const changes = valuesImageChanges(
      'argocd:a',
      [
        { path: 'envs/prod/values.yaml', text: 'image: {repository: r/a, tag: "1"}\n' },
        { path: 'a.yaml helm.valuesObject', text: '{"image":{"tag":"2"}}' },
      ],
      [
        { path: 'envs/prod/values.yaml', text: 'image: {repository: r/a, tag: "1"}\n' },
        { path: 'a.yaml helm.valuesObject', text: '{"image":{"tag":"3"}}' },
      ],
      { inOrder: true },
    );
    expect(changes.map((change) => [change.from, change.to])).toEqual([['r/a:2', 'r/a:3']]);
  });

  it('notes on a target that renders Argo CD Applications that they are not followed', () => {
    const apps = (revision: string): RenderOutcome => ({
      status: 'ok',
      yaml: `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook, namespace: argocd}\nspec: {source: {path: guestbook, targetRevision: ${revision}}}\n`,
    });
    const chart = withAppOfAppsNote(
      diffTarget({ id: 'apps', kind: 'helm', dir: 'apps' }, apps('master'), apps('main')),
    );
    expect(chart.notes).toContain(APP_OF_APPS_NOTE);
    const plain = withAppOfAppsNote(
      diffTarget({ id: 'argocd', kind: 'plain', dir: 'argocd' }, apps('master'), apps('main')),
    );
    expect(plain.notes).not.toContain(APP_OF_APPS_NOTE);
  });
});
