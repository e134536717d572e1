import type { RenderOutcome, TargetNode } from '../../planners/diff/index.js';
import { renderWithTool, type ToolOutcome, type ToolRunOptions } from './exec.js';
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
  return renderWithTool('helm template', tools.helm.command, args, checkoutDir, options);
}
