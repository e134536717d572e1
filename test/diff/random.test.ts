/**
 * Template randomness (issue 36): what differs between two renders of the same inputs is random,
 * never a change. Table cases on the pure part (settleRandomness, diffTarget with a second render).
 */
import { describe, expect, it } from 'vitest';
import {
  diffTarget,
  parseManifests,
  settleRandomness,
  RANDOM_VALUE,
  type ManifestObject,
  type RenderOutcome,
} from '../../src/planners/diff/index.js';

function objects(text: string): ManifestObject[] {
  const parsed = parseManifests(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.objects;
}

/** A podinfo-like render: a test hook Pod with a random name, a Secret with a random token, a Deployment. */
function render(hook: string, token: string, tag = '6.7.0'): string {
  return [
    '---',
    '# Source: podinfo/templates/secret.yaml',
    'apiVersion: v1',
    'kind: Secret',
    'metadata: {name: podinfo-token, namespace: web}',
    `data: {token: ${Buffer.from(token).toString('base64')}, user: cmVhZGVy}`,
    '---',
    '# Source: podinfo/templates/deployment.yaml',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: podinfo, namespace: web}',
    `spec: {template: {metadata: {annotations: {checksum/token: ${token}x}}, spec: {containers: [{name: app, image: "ghcr.io/stefanprodan/podinfo:${tag}"}]}}}`,
    '---',
    '# Source: podinfo/templates/tests/grpc.yaml',
    'apiVersion: v1',
    'kind: Pod',
    `metadata: {name: podinfo-grpc-test-${hook}, namespace: web, annotations: {helm.sh/hook: test-success}}`,
    'spec: {containers: [{name: probe, image: grpc_health_probe}]}',
    '',
  ].join('\n');
}

const target = { id: 'argocd:podinfo', kind: 'helm' as const, dir: 'charts/podinfo' };
const ok = (yaml: string, again?: string): RenderOutcome => ({
  status: 'ok',
  yaml,
  ...(again !== undefined ? { again } : {}),
});

describe('settleRandomness', () => {
  it('keeps what both renders agree on, leaves out objects named at random, and masks random fields', () => {
    const settled = settleRandomness(objects(render('ab12c', 'one')), objects(render('zz9yx', 'two')));
    expect(settled.objects.map((object) => `${object.kind}/${object.name}`)).toEqual([
      'Secret/podinfo-token',
      'Deployment/podinfo',
    ]);
    const secret = settled.objects[0] as ManifestObject;
    expect(secret.body.data).toEqual({ token: RANDOM_VALUE, user: 'cmVhZGVy' });
    expect(settled.random).toEqual([
      {
        group: 'apps',
        kind: 'Deployment',
        namespace: 'web',
        source: 'podinfo/templates/deployment.yaml',
        name: 'podinfo',
        count: 1,
        what: 'values',
        testHook: false,
        fields: ['spec.template.metadata.annotations."checksum/token"'],
      },
      {
        group: '',
        kind: 'Secret',
        namespace: 'web',
        source: 'podinfo/templates/secret.yaml',
        name: 'podinfo-token',
        count: 1,
        what: 'values',
        testHook: false,
        fields: ['data.token'],
      },
      {
        group: '',
        kind: 'Pod',
        namespace: 'web',
        source: 'podinfo/templates/tests/grpc.yaml',
        count: 1,
        what: 'name',
        testHook: true,
      },
    ]);
  });

  it('says the same thing whatever the random values are', () => {
    const first = settleRandomness(objects(render('aaaaa', 'x1')), objects(render('bbbbb', 'x2')));
    const second = settleRandomness(objects(render('ccccc', 'y1')), objects(render('ddddd', 'y2')));
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it('changes nothing when the two renders agree', () => {
    const same = objects(render('fixed', 'fixed'));
    expect(settleRandomness(same, objects(render('fixed', 'fixed')))).toEqual({ objects: same, random: [] });
  });
});

describe('diffTarget with a second render', () => {
  it('an image bump in a chart with random test hooks is one changed Deployment, the hook named once as random', () => {
    const diff = diffTarget(
      target,
      ok(render('aaaaa', 'b1'), render('bbbbb', 'b2')),
      ok(render('ccccc', 'h1', '6.7.1'), render('ddddd', 'h2', '6.7.1')),
    );
    expect(diff.status).toBe('changed');
    expect(diff.counts).toEqual({ added: 0, changed: 1, removed: 0, renamed: 0, recreated: 0, unchanged: 1 });
    expect(diff.objects.map((object) => `${object.kind}/${object.name}`)).toEqual(['Deployment/podinfo']);
    expect(diff.alerts).toEqual([]);
    expect(diff.notes.filter((note) => note.includes('a new name on every render'))).toHaveLength(1);
    expect(diff.notes.join('\n')).not.toMatch(/aaaaa|bbbbb|ccccc|ddddd/);
  });

  it('a pull request that changes nothing in the chart leaves it unchanged', () => {
    const diff = diffTarget(
      target,
      ok(render('aaaaa', 'b1'), render('bbbbb', 'b2')),
      ok(render('ccccc', 'h1'), render('ddddd', 'h2')),
    );
    expect(diff.status).toBe('unchanged');
    expect(diff.objects).toEqual([]);
  });

  it('without a second render the same charts look deleted and recreated (the reason for it)', () => {
    const diff = diffTarget(target, ok(render('aaaaa', 'b1')), ok(render('ccccc', 'h1')));
    expect(diff.status).toBe('changed');
    expect(diff.counts.recreated + diff.counts.added + diff.counts.removed).toBeGreaterThan(0);
  });

  it('a field that turns random at head shows as such', () => {
    const base = render('aaaaa', 'same');
    const diff = diffTarget(target, ok(base, base), ok(render('ccccc', 'h1'), render('ddddd', 'h2')));
    const secret = diff.objects.find((object) => object.kind === 'Secret');
    expect(secret?.secretKeys?.map(({ key, change }) => [key, change])).toEqual([['token', 'changed']]);
    expect(diff.notes).toContain(
      'Secret web/podinfo-token from podinfo/templates/secret.yaml: data.token is random on every render, compared as "(random on every render)".',
    );
  });
});
