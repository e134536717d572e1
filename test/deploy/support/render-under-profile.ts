/**
 * Renders one small kustomization with the real `kubectl kustomize` in the `namespace` sandbox, as
 * a worker does (`renderWithTool`), and prints the outcome as JSON. test/deploy/seccomp-profile.test.ts
 * runs it under the worker's seccomp profile and under the runtime's default.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderWithTool } from '../../../src/adapters/render/exec.js';

const checkout = mkdtempSync(join(tmpdir(), 'escalator-profile-'));
const home = mkdtempSync(join(tmpdir(), 'escalator-profile-home-'));
writeFileSync(join(checkout, 'kustomization.yaml'), 'resources:\n  - cm.yaml\nnamePrefix: dev-\n');
writeFileSync(join(checkout, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "1"\n');
const kubectl = process.argv[2] ?? 'kubectl';
try {
  const result = await renderWithTool(
    'kustomize',
    kubectl,
    ['kustomize', '--load-restrictor', 'LoadRestrictionsRootOnly', '.'],
    checkout,
    {
      timeoutMs: 60_000,
      maxOutputBytes: 1024 * 1024,
      maxMemoryBytes: 1024 * 1024 * 1024,
      home,
      path: '/usr/bin:/bin',
      isolation: { mode: 'namespace' },
    },
  );
  process.stdout.write(`${JSON.stringify(result.outcome)}\n`);
} finally {
  rmSync(checkout, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
