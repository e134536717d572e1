/**
 * The one place a render may write (docs/security.md, "The sandbox"): a writable copy of the chart
 * folder bound over it, for `helm dependency build` and for Flux's replaced values.yaml (issue
 * 36). A tool run with such an overlay writes into the copy, and nowhere in the checkout — which is
 * shared by every render of that commit — in `namespace` and in `proxy` isolation.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderWithTool, type RenderIsolationMode } from '../../src/adapters/render/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'escalator-overlay-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each<RenderIsolationMode>(['namespace', 'proxy'])('a writable chart copy (%s isolation)', (mode) => {
  it('takes what the tool writes in the chart folder; the checkout stays as it was', async () => {
    const root = join(scratch, mode);
    const checkout = join(root, 'checkout');
    mkdirSync(join(checkout, 'charts', 'shop'), { recursive: true });
    mkdirSync(join(checkout, 'charts', 'common'), { recursive: true });
    writeFileSync(join(checkout, 'charts', 'shop', 'values.yaml'), 'from: checkout\n');
    writeFileSync(join(checkout, 'charts', 'common', 'Chart.yaml'), 'name: common\n');
    const copy = join(root, 'copy');
    cpSync(join(checkout, 'charts', 'shop'), copy, { recursive: true });
    writeFileSync(join(copy, 'values.yaml'), '');
    const spy = join(root, 'spy.sh');
    // The tool's working directory is the checkout (at its own path inside the sandbox).
    writeFileSync(
      spy,
      [
        '#!/bin/sh',
        'exec 1>&2',
        'mkdir -p charts/shop/charts && echo built > charts/shop/charts/common-1.0.0.tgz && echo WROTE-CHART',
        'echo >> charts/common/Chart.yaml 2>/dev/null && echo WROTE-DEPENDENCY',
        'touch planted 2>/dev/null && echo WROTE-ROOT',
        'printf "values:%s;" "$(cat charts/shop/values.yaml)"',
        'echo END; exit 1',
      ].join('\n'),
    );
    chmodSync(spy, 0o755);
    const result = await renderWithTool(
      'helm dependency build',
      spy,
      [],
      checkout,
      {
        timeoutMs: 30_000,
        maxOutputBytes: 1024 * 1024,
        maxMemoryBytes: 1024 * 1024 * 1024,
        home: join(root, 'home'),
        path: process.env.PATH,
        isolation: { mode },
      },
      [],
      [{ target: join(checkout, 'charts', 'shop'), source: copy }],
    );
    expect(result.outcome.status).toBe('failed');
    const message = result.outcome.status === 'failed' ? result.outcome.message : '';
    // The copy is what the tool sees in the chart folder (its values.yaml replaced), and what it writes there stays.
    expect(message).toContain('WROTE-CHART');
    expect(message).toContain('values:;');
    expect(existsSync(join(copy, 'charts', 'common-1.0.0.tgz'))).toBe(true);
    // The checkout is untouched: no charts/ written into the chart, nothing planted beside it.
    expect(existsSync(join(checkout, 'charts', 'shop', 'charts'))).toBe(false);
    expect(existsSync(join(checkout, 'planted'))).toBe(false);
    expect(existsSync(join(checkout, 'charts', 'common', 'Chart.yaml'))).toBe(true);
    if (mode === 'namespace') {
      // Outside the copy the checkout is read-only in the sandbox: the writes fail there.
      expect(message).not.toContain('WROTE-DEPENDENCY');
      expect(message).not.toContain('WROTE-ROOT');
    }
    expect(readFileSync(join(checkout, 'charts', 'common', 'Chart.yaml'), 'utf8')).toBe('name: common\n');
    expect(readFileSync(join(checkout, 'charts', 'shop', 'values.yaml'), 'utf8')).toBe('from: checkout\n');
  });
});
