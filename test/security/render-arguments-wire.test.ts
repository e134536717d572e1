/**
 * Issue 31 through the wire: a pull request on the sandbox GitHub whose Argo CD Application names
 * its release `--set-file=leak=/proc/<pid>/environ` and whose Flux HelmRelease names its release
 * `--values=http://127.0.0.1:<canary>/values.yaml`, rendered by the running service (every role in
 * this process, real Redis, real helm 3.17) in `proxy` isolation, the mode where the attack
 * printed the worker's environment. The diff comment must refuse both with file and line, show no
 * entry of the worker's environment, and the canary must see no request.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startStack, type Stack } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HELM3 = join(ROOT, '.cache/tools/helm-3.17/helm');

const chart = {
  'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
  'charts/web/values.yaml': 'leak: ""\n',
  'charts/web/templates/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  leak: {{ .Values.leak | quote }}\n',
};
const application = (name: string, releaseName: string) =>
  `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ${name}\nspec:\n  destination:\n    namespace: web\n  source:\n    path: charts/web\n    helm:\n      releaseName: ${JSON.stringify(releaseName)}\n`;
const helmRelease = (releaseName: string) =>
  `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: fetch\n  namespace: apps\nspec:\n  chart:\n    spec:\n      chart: charts/web\n      sourceRef: {kind: GitRepository, name: repo}\n  releaseName: ${JSON.stringify(releaseName)}\n`;

describe('a pull request whose release names are helm flags (sandbox GitHub, real helm, proxy isolation)', () => {
  let stack: Stack;
  let canary: Server;
  const hits: string[] = [];
  let port = 0;
  const owner = 'developer';
  const repo = 'gitops';

  beforeAll(async () => {
    canary = createServer((request, response) => {
      hits.push(`${request.method} ${request.url}`);
      response.end('leak: CANARY-values-from-loopback\n');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    port = (canary.address() as AddressInfo).port;
    // The render adapter finds helm through the process environment (src/adapters/render/tools.ts).
    process.env.ESCALATOR_HELM_PATH = HELM3;
    stack = await startStack({ ESCALATOR_RENDER_ISOLATION: 'proxy', ESCALATOR_HELM_PATH: HELM3 });
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': 'environments:\n  - name: dev\n    paths: ["apps/*"]\n    from: registry\n',
        ...chart,
        'apps/good.yaml': application('good', 'good-web'),
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    delete process.env.ESCALATOR_HELM_PATH;
    await new Promise<void>((resolve) => canary.close(() => resolve()));
  });

  it('refuses both with file and line, prints no environment and fetches nothing', { timeout: 150_000 }, async () => {
    const steal = `--set-file=leak=/proc/${process.pid}/environ`;
    const fetch = `--values=http://127.0.0.1:${port}/values.yaml`;
    await stack.client.commit(`${owner}/${repo}`, {
      branch: 'attack',
      from: 'main',
      files: {
        'apps/good.yaml': application('good', 'good-web-2'),
        'apps/steal.yaml': application('steal', steal),
        'flux/fetch.yaml': helmRelease(fetch),
      },
    });
    const pull = await stack.client.openPull(`${owner}/${repo}`, { title: 'Release names', head: 'attack' });
    const comment = await eventually(
      async () =>
        (await stack.user.rest.issues.listComments({ owner, repo, issue_number: pull.number })).data.find((c) =>
          c.body?.startsWith('<!-- escalator:diff v1 -->'),
        ),
      { what: 'the diff comment', timeoutMs: 120_000 },
    );
    const body = comment.body ?? '';
    expect(hits).toEqual([]);
    expect(body).not.toContain('CANARY-values-from-loopback');
    const environ = readFileSync(`/proc/${process.pid}/environ`, 'utf8')
      .split('\0')
      .filter((entry) => entry.length >= 16 && entry.includes('='));
    expect(environ.length).toBeGreaterThan(0);
    for (const entry of environ) expect(body).not.toContain(entry.slice(0, 40));
    expect(body).toContain(`apps/steal.yaml line 11 spec.source.helm.releaseName: ${steal} is not a Helm release name`);
    expect(body).toContain(`flux/fetch.yaml line 11 spec.releaseName: ${fetch} is not a Helm release name`);
    expect(body).toContain('good-web-2');
    expect(body).not.toContain('helm is not installed');
    const check = await eventually(
      async () =>
        (await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/diff' }))
          .data.check_runs[0],
      { what: 'the diff check' },
    );
    expect(check.conclusion).toBe('failure');
  });
});
