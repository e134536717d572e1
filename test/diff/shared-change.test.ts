import { describe, expect, it } from 'vitest';
import {
  affectedTargets,
  buildReport,
  diffTarget,
  discoverTargets,
  DIFF_COMMENT_MARKER,
  planSharedChange,
  reachEnvironments,
  renderComment,
  renderSharedChange,
  targetReach,
  toJsonReport,
  type ReachEnvironment,
  type SharedChange,
  type TargetStatus,
  type TreeView,
} from '../../src/planners/diff/index.js';
import { isEscalatorPromotion } from '../../src/planners/pull-marker.js';

function tree(files: Record<string, string>): TreeView {
  return { files: Object.keys(files).sort(), read: (path) => files[path] };
}

const deployment = (name: string) => `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}}\n`;
const application = (env: string) =>
  `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: api-${env}}\nspec:\n  source:\n    path: charts/api\n    helm:\n      valueFiles: [values-${env}.yaml]\n  destination: {namespace: api}\n`;

/** Three environments of one app over one base, a chart per environment's values, a base only prod uses, and an overlay prod builds on. */
const repo = tree({
  'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
  'apps/hello/base/deployment.yaml': deployment('hello'),
  'apps/hello/base/patches/limits.yaml': deployment('hello'),
  'apps/hello/overlays/dev/kustomization.yaml': 'resources: [../../base]\n',
  'apps/hello/overlays/staging/kustomization.yaml':
    'resources: [../../base]\npatches:\n  - path: ../../base/patches/limits.yaml\n',
  'apps/hello/overlays/prod/kustomization.yaml':
    'resources: [../../base]\npatches:\n  - path: ../../base/patches/limits.yaml\n',
  'apps/solo/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
  'apps/solo/base/deployment.yaml': deployment('solo'),
  'apps/solo/overlays/prod/kustomization.yaml': 'resources: [../../base]\n',
  'apps/chain/overlays/staging/kustomization.yaml': 'resources: [deployment.yaml]\n',
  'apps/chain/overlays/staging/deployment.yaml': deployment('chain'),
  'apps/chain/overlays/prod/kustomization.yaml': 'resources: [../staging]\n',
  'platform/kustomization.yaml': 'resources: [../apps/hello/base]\n',
  'charts/api/Chart.yaml': 'apiVersion: v2\nname: api\nversion: 1.0.0\n',
  'charts/api/values.yaml': 'tag: "1"\n',
  'charts/api/values-dev.yaml': 'tag: "2"\n',
  'charts/api/values-prod.yaml': 'tag: "3"\n',
  'charts/api/templates/deployment.yaml': deployment('api'),
  'argocd/dev/api.yaml': application('dev'),
  'argocd/prod/api.yaml': application('prod'),
  'README.md': '# gitops\n',
});

const environments: ReachEnvironment[] = [
  { name: 'dev', paths: ['apps/*/overlays/dev', 'argocd/dev'], reviewers: [], health: false },
  { name: 'staging', paths: ['apps/*/overlays/staging'], from: 'dev', soak: '1h', reviewers: [], health: true },
  {
    name: 'prod',
    paths: ['apps/*/overlays/prod', 'argocd/prod'],
    from: 'staging',
    reviewers: ['@example/release-managers'],
    health: false,
  },
];

const nodes = discoverTargets(repo);

/** The reach of what `changed` touches, each target's render as `statuses` says (default: changed). */
function plan(
  changed: string[],
  statuses: Record<string, TargetStatus> = {},
  envs: ReachEnvironment[] = environments,
): SharedChange | undefined {
  const reach = affectedTargets(nodes, nodes, changed).targets.map(({ base, head, reads }) =>
    targetReach((head ?? base)!, reads ?? []),
  );
  return planSharedChange({
    report: { targets: reach.map(({ id }) => ({ id, status: statuses[id] ?? 'changed' })), reach },
    environments: envs,
    files: repo.files,
  });
}

const staging = { environment: 'staging', from: 'dev', soak: '1h', reviewers: [] };
const prod = { environment: 'prod', from: 'staging', health: true, reviewers: ['@example/release-managers'] };

describe('planSharedChange: which environments a change reaches at once', () => {
  const cases: Array<{
    name: string;
    changed: string[];
    statuses?: Record<string, TargetStatus>;
    envs?: ReachEnvironment[];
    expected: SharedChange | undefined;
  }> = [
    {
      name: 'a base three environments render reaches all three, through the base folder',
      changed: ['apps/hello/base/deployment.yaml'],
      expected: { environments: ['dev', 'staging', 'prod'], through: ['apps/hello/base'], skips: [staging, prod] },
    },
    {
      name: 'a patch file in the base that two overlays apply names the base, not the file',
      changed: ['apps/hello/base/patches/limits.yaml'],
      expected: { environments: ['staging', 'prod'], through: ['apps/hello/base'], skips: [staging, prod] },
    },
    {
      name: "one environment's own folder only: no callout",
      changed: ['apps/hello/overlays/dev/kustomization.yaml'],
      expected: undefined,
    },
    {
      name: 'each environment changed in its own folder: no callout (no file is shared)',
      changed: ['apps/hello/overlays/dev/kustomization.yaml', 'apps/hello/overlays/prod/kustomization.yaml'],
      expected: undefined,
    },
    { name: 'a file no target reads: no callout', changed: ['README.md'], expected: undefined },
    {
      name: 'a base only one environment renders: no callout',
      changed: ['apps/solo/base/deployment.yaml'],
      expected: undefined,
    },
    {
      name: "an overlay another environment builds on reaches both, through the overlay's folder",
      changed: ['apps/chain/overlays/staging/deployment.yaml'],
      expected: { environments: ['staging', 'prod'], through: ['apps/chain/overlays/staging'], skips: [staging, prod] },
    },
    {
      name: 'an environment whose render does not change is not reached',
      changed: ['apps/hello/base/deployment.yaml'],
      statuses: { 'apps/hello/overlays/dev': 'unchanged' },
      expected: { environments: ['staging', 'prod'], through: ['apps/hello/base'], skips: [staging, prod] },
    },
    {
      name: 'a base change that renders the same everywhere (a comment) reaches nothing',
      changed: ['apps/hello/base/deployment.yaml'],
      statuses: {
        'apps/hello/overlays/dev': 'unchanged',
        'apps/hello/overlays/staging': 'unchanged',
        'apps/hello/overlays/prod': 'unchanged',
        platform: 'unchanged',
      },
      expected: undefined,
    },
    {
      name: 'a target that fails or is not rendered is reached (what it does is not known to be nothing)',
      changed: ['apps/hello/base/deployment.yaml'],
      statuses: {
        'apps/hello/overlays/dev': 'unchanged',
        'apps/hello/overlays/staging': 'failed',
        'apps/hello/overlays/prod': 'not-rendered',
      },
      expected: { environments: ['staging', 'prod'], through: ['apps/hello/base'], skips: [staging, prod] },
    },
    {
      name: 'a chart template reaches the environments of the Applications that deploy it',
      changed: ['charts/api/templates/deployment.yaml'],
      expected: { environments: ['dev', 'prod'], through: ['charts/api'], skips: [prod] },
    },
    {
      name: "a chart's values file of one environment only: no callout",
      changed: ['charts/api/values-prod.yaml'],
      expected: undefined,
    },
    {
      name: 'environments without gates are named, with nothing to skip',
      changed: ['apps/hello/base/deployment.yaml'],
      envs: [
        { name: 'dev', paths: ['apps/*/overlays/dev'], reviewers: [], health: false },
        { name: 'qa', paths: ['apps/*/overlays/staging'], reviewers: [], health: false },
      ],
      expected: { environments: ['dev', 'qa'], through: ['apps/hello/base'], skips: [] },
    },
    {
      name: 'a repository with no environments: no callout',
      changed: ['apps/hello/base/deployment.yaml'],
      envs: [],
      expected: undefined,
    },
  ];
  for (const { name, changed, statuses, envs, expected } of cases)
    it(name, () => {
      expect(plan(changed, statuses, envs)).toEqual(expected);
    });

  it('a target no environment holds (platform/) is rendered but reaches no environment', () => {
    const reach = affectedTargets(nodes, nodes, ['apps/hello/base/deployment.yaml']).targets.map((t) => t.head?.id);
    expect(reach).toContain('platform');
    expect(plan(['apps/hello/base/deployment.yaml'])?.environments).toEqual(['dev', 'staging', 'prod']);
  });

  it('says nothing when the changed paths are not known (no reach in the report)', () => {
    expect(
      planSharedChange({ report: { targets: [{ id: 'apps/hello/overlays/dev', status: 'changed' }] }, environments }),
    ).toBeUndefined();
  });

  it('names the file itself when the tree is not given or no kustomization or chart holds it', () => {
    const reach = [
      { id: 'a', at: ['envs/dev'], reads: ['shared/config.yaml'] },
      { id: 'b', at: ['envs/prod'], reads: ['shared/config.yaml'] },
    ];
    const report = { targets: reach.map(({ id }) => ({ id, status: 'changed' as const })), reach };
    const envs = [
      { name: 'dev', paths: ['envs/dev'], reviewers: [], health: false },
      { name: 'prod', paths: ['envs/prod'], reviewers: [], health: false },
    ];
    expect(planSharedChange({ report, environments: envs })?.through).toEqual(['shared/config.yaml']);
    expect(planSharedChange({ report, environments: envs, files: ['shared/config.yaml'] })?.through).toEqual([
      'shared/config.yaml',
    ]);
  });

  it('where a target lives: its folder and kustomization, or the Application and values files of a release', () => {
    const byId = new Map(nodes.map((node) => [node.id, node]));
    expect(targetReach(byId.get('apps/hello/overlays/prod')!, ['b', 'a'])).toEqual({
      id: 'apps/hello/overlays/prod',
      at: ['apps/hello/overlays/prod', 'apps/hello/overlays/prod/kustomization.yaml'],
      reads: ['a', 'b'],
    });
    expect(targetReach(byId.get('argocd:api-dev')!, [])).toEqual({
      id: 'argocd:api-dev',
      at: ['argocd/dev/api.yaml', 'charts/api/values-dev.yaml'],
      reads: [],
    });
  });
});

describe('reachEnvironments: the configuration as the planner reads it', () => {
  it('drops from: registry, a soak of nothing and an absent health; keeps the rest as written', () => {
    expect(
      reachEnvironments([
        { name: 'dev', paths: ['apps/*/overlays/dev'], from: 'registry', soak: '0s', reviewers: [] },
        { name: 'qa', paths: ['qa'], from: 'dev', soak: '0h0m', health: { argocd: {} } },
        { name: 'prod', paths: ['prod'], from: 'qa', soak: '1h30m', reviewers: ['alice'] },
        { name: 'eu', paths: ['eu'], from: 'prod', soak: '10s' },
      ]),
    ).toEqual([
      { name: 'dev', paths: ['apps/*/overlays/dev'], reviewers: [], health: false },
      { name: 'qa', paths: ['qa'], from: 'dev', reviewers: [], health: true },
      { name: 'prod', paths: ['prod'], from: 'qa', soak: '1h30m', reviewers: ['alice'], health: false },
      { name: 'eu', paths: ['eu'], from: 'prod', soak: '10s', reviewers: [], health: false },
    ]);
  });
});

describe('renderSharedChange', () => {
  it('names the environments, the base and each gate skipped, in one sentence', () => {
    expect(renderSharedChange(plan(['apps/hello/base/deployment.yaml'])!)).toBe(
      "> [!WARNING]\n> **This change reaches dev, staging and prod at once** through `apps/hello/base`: it skips staging's promotion from dev and soak (1h), and prod's promotion from staging, health gate on staging and reviewer (`@example/release-managers`).",
    );
  });

  it('is a note when none of the environments has a gate to skip', () => {
    expect(renderSharedChange({ environments: ['dev', 'qa'], through: ['apps/hello/base'], skips: [] })).toBe(
      '> [!NOTE]\n> **This change reaches dev and qa at once** through `apps/hello/base`.',
    );
  });

  it('caps paths and reviewers, and puts names the configuration would refuse in code spans', () => {
    const change: SharedChange = {
      environments: ['dev', 'prod <b>'],
      through: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
      skips: [
        {
          environment: 'prod <b>',
          reviewers: ['@a', '@b', '@c', '@d', '@e', '@f'],
          soak: '1h](x)',
        },
      ],
    };
    expect(renderSharedChange(change)).toBe(
      "> [!WARNING]\n> **This change reaches dev and `prod <b>` at once** through `a`, `b`, `c`, `d`, `e` and 2 more paths: it skips `prod <b>`'s soak (`1h](x)`) and reviewers (`@a`, `@b`, `@c`, `@d`, `@e` and 1 more reviewers).",
    );
  });
});

describe('the sticky comment with a shared change', () => {
  const SHA_BASE = 'a'.repeat(40);
  const SHA_HEAD = 'b'.repeat(40);
  const context = { baseSha: SHA_BASE, headSha: SHA_HEAD, repository: 'example/gitops', mergeCommit: true };
  const shared = plan(['apps/hello/base/deployment.yaml'])!;
  const callout = renderSharedChange(shared);
  const configMap = (value: string) => ({
    status: 'ok' as const,
    yaml: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: ${value}\n`,
  });
  const report = (after: string) =>
    buildReport({
      baseSha: SHA_BASE,
      headSha: SHA_HEAD,
      targets: ['apps/hello/overlays/dev', 'apps/hello/overlays/prod'].map((id) =>
        diffTarget({ id, kind: 'kustomize', dir: id }, configMap('a'), configMap(after)),
      ),
      reach: [{ id: 'apps/hello/overlays/dev', at: ['apps/hello/overlays/dev'], reads: ['apps/hello/base/x.yaml'] }],
    });

  it('starts with the callout, right below the marker; the rest is the comment as it was, byte for byte', () => {
    const without = renderComment(report('b'), context);
    const withCallout = renderComment(report('b'), { ...context, sharedChange: shared });
    expect(withCallout.startsWith(`${DIFF_COMMENT_MARKER}\n\n${callout}\n\n### Rendered manifest diff\n`)).toBe(true);
    expect(withCallout).toBe(without.replace(`${DIFF_COMMENT_MARKER}\n\n`, `${DIFF_COMMENT_MARKER}\n\n${callout}\n\n`));
  });

  it('is in the short form too', () => {
    const without = renderComment(report('a'), context);
    expect(without).toContain('No rendered changes');
    expect(renderComment(report('a'), { ...context, sharedChange: shared })).toBe(
      without.replace(`${DIFF_COMMENT_MARKER}\n\n`, `${DIFF_COMMENT_MARKER}\n\n${callout}\n\n`),
    );
  });

  it('keeps the reach out of the JSON report', () => {
    const json = toJsonReport(report('b'));
    expect(json).not.toContain('reach');
    expect(report('b').reach).toHaveLength(1);
  });
});

describe('isEscalatorPromotion: whose pull requests never get the callout', () => {
  const bot = 'escalator[bot]';
  const pull = (over: { type?: string; login?: string; ref?: string; repo?: string } = {}) => ({
    user: { type: over.type ?? 'Bot', login: over.login ?? bot },
    head: { ref: over.ref ?? 'escalator/promote/prod/hello', repo: { full_name: over.repo ?? 'example/gitops' } },
  });
  const cases: Array<[string, ReturnType<typeof pull>, boolean]> = [
    ['a promotion Escalator opened', pull(), true],
    ['a promotion of a whole environment', pull({ ref: 'escalator/promote/prod' }), true],
    ['a person on a promotion branch', pull({ type: 'User', login: 'mallory' }), false],
    ['another App on a promotion branch', pull({ login: 'other[bot]' }), false],
    ['a bump Escalator opened', pull({ ref: 'escalator/dev/hello' }), false],
    ['a promotion branch from a fork', pull({ repo: 'mallory/gitops' }), false],
  ];
  for (const [name, origin, expected] of cases)
    it(name, () => {
      expect(isEscalatorPromotion(origin, 'example/gitops', bot)).toBe(expected);
    });
});
