import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOciLayout } from '../support/oci.js';
import { freePort } from '../support/net.js';
import { eventually, readFile, startStack, type Stack } from '../support/stack.js';

/**
 * The real thing: Debian's `docker-registry` (CNCF Distribution 2.8) notifies Escalator, and
 * `skopeo` pushes an OCI image built here. No mock stands between the registry and the PR.
 */
describe('CNCF Distribution → Escalator → pull request', () => {
  let stack: Stack;
  let registry: ChildProcess;
  let registryHost: string;
  const work = mkdtempSync(join(tmpdir(), 'escalator-registry-'));
  const overlay = (host: string) =>
    `resources:\n- ../../base\nimages:\n- name: ${host}/team/app # from the local registry\n  newTag: "1.0"\n  digest: sha256:${'0'.repeat(64)}\n`;

  beforeAll(async () => {
    stack = await startStack();
    const port = await freePort();
    registryHost = `127.0.0.1:${port}`;
    writeFileSync(
      join(work, 'config.yml'),
      `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${join(work, 'storage')}\nhttp:\n  addr: ${registryHost}\nnotifications:\n  endpoints:\n    - name: escalator\n      url: ${stack.app.url}/registry/distribution\n      headers:\n        Authorization: [Bearer ${stack.registryToken}]\n      timeout: 2s\n      threshold: 5\n      backoff: 1s\n`,
    );
    registry = spawn('docker-registry', ['serve', join(work, 'config.yml')], { stdio: 'ignore' });
    await eventually(async () => ((await fetch(`http://${registryHost}/v2/`)).ok ? true : undefined), {
      what: 'docker-registry to start',
    });
    await stack.client.createRepo({
      name: 'gitops',
      files: {
        '.github/escalator.yml':
          'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n',
        'apps/app/overlays/dev/kustomization.yaml': overlay(registryHost),
      },
    });
  });
  afterAll(async () => {
    registry?.kill('SIGTERM');
    await stack?.close();
  });

  it('opens a PR with the exact tag and digest skopeo pushed', { timeout: 90_000 }, async () => {
    const layout = join(work, 'layout');
    buildOciLayout(layout, 'v2', 'escalator-test');
    execFileSync('skopeo', [
      'copy',
      '--quiet',
      '--dest-tls-verify=false',
      `oci:${layout}:v2`,
      `docker://${registryHost}/team/app:2.0.1`,
    ]);
    // The digest of the manifest as the registry stores it (skopeo may re-encode). The quotes stay.
    const head = await fetch(`http://${registryHost}/v2/team/app/manifests/2.0.1`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    const digest = head.headers.get('docker-content-digest') as string;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const pull = await eventually(
      async () => {
        const open = (await stack.user.rest.pulls.list({ owner: 'developer', repo: 'gitops', state: 'open' })).data;
        return open.find((p) => p.labels.length > 0);
      },
      { what: 'the bump PR', timeoutMs: 60_000 },
    );
    expect(pull.title).toBe('Bump app to 2.0.1 in dev');
    const text = await readFile(
      stack,
      'developer',
      'gitops',
      'apps/app/overlays/dev/kustomization.yaml',
      pull.head.sha,
    );
    expect(text).toBe(
      overlay(registryHost)
        .replace('newTag: "1.0"', 'newTag: "2.0.1"')
        .replace(`sha256:${'0'.repeat(64)}`, digest),
    );
  });
});
