import { realpathSync } from 'node:fs';
import type { RenderOutcome, TargetNode } from '../../planners/diff/index.js';
import { cleanToolError, runTool, scrubbedEnv } from './exec.js';
import type { ToolOutcome, ToolRunOptions } from './kustomize.js';
import type { Tools } from './tools.js';

export const HELM_MISSING = 'helm is not installed where Escalator renders, so this chart was not rendered; install helm to see the objects. Shown instead: a structural diff of its values files.';

/** A DNS-1123 release name from the chart directory. */
function releaseName(dir: string): string {
  const base = dir.slice(dir.lastIndexOf('/') + 1).toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '');
  return (base || 'release').slice(0, 53);
}

/**
 * `helm template <release> <chart> -f <values…>` when helm is installed; otherwise a clear
 * "helm is not installed" outcome carrying the values files, which the planner diffs structurally.
 * `values` reads a values file's text from the commit.
 */
export async function renderHelmChart(node: TargetNode, checkoutDir: string | undefined, tools: Tools, valuesFiles: Array<{ path: string; text: string }>, options: ToolRunOptions): Promise<ToolOutcome> {
  if (!tools.helm || checkoutDir === undefined) {
    const outcome: RenderOutcome = { status: 'tool-missing', tool: 'helm', message: HELM_MISSING, values: valuesFiles };
    return { outcome, toolMs: 0, cacheable: false };
  }
  const chart = node.dir === '' ? '.' : `./${node.dir}`;
  const args = ['template', releaseName(node.dir), chart, ...(node.valuesFiles ?? []).flatMap((file) => ['-f', `./${file}`])];
  const result = await runTool(tools.helm.command, args, { cwd: checkoutDir, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes, env: scrubbedEnv(options.path, options.home) });
  if (result.timedOut) return { outcome: { status: 'failed', message: `helm template did not finish within ${Number((options.timeoutMs / 1000).toFixed(1))} s and was stopped` }, toolMs: result.ms, cacheable: false };
  if (result.tooLarge) return { outcome: { status: 'failed', message: `helm template printed more than ${Math.round(options.maxOutputBytes / 1024 / 1024)} MiB and was stopped` }, toolMs: result.ms, cacheable: true };
  if (result.code !== 0) {
    let message = cleanToolError(result.stderr, checkoutDir);
    try {
      message = cleanToolError(message, realpathSync(checkoutDir));
    } catch {
      // the checkout path has no other spelling
    }
    return { outcome: { status: 'failed', message: message || `helm template exited with ${result.code}` }, toolMs: result.ms, cacheable: result.code !== null };
  }
  return { outcome: { status: 'ok', yaml: result.stdout }, toolMs: result.ms, cacheable: true };
}
