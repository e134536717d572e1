import { planRefusal, type TargetNode } from '../../planners/diff/index.js';
import { renderWithTool, type ToolOutcome, type ToolRunOptions } from './exec.js';
import { refuseChartArchives, unfollowedLinkedFolders } from './helm.js';
import type { Tools } from './tools.js';

/** Refusals that need no tool run: unreadable kustomizations, plugins, paths outside the repository, remote resources, symlinks that left the checkout. */
export function refuseKustomization(
  node: TargetNode,
  refusedSymlinks: readonly string[],
  allowRemote: boolean,
): string | undefined {
  const planned = planRefusal(node, allowRemote);
  if (planned) return planned;
  const removed = refusedSymlinks.filter(
    (link) =>
      node.inputFiles.includes(link) ||
      node.inputDirs.some((dir) => dir === '' || link.startsWith(`${dir}/`)) ||
      link.startsWith(`${node.dir}/`),
  );
  const links = [...new Set([...removed, ...(node.linksOut ?? [])])].sort();
  if (links.length > 0) return `refused: symbolic links point outside the repository (${links.join(', ')})`;
  return undefined;
}

/**
 * `kustomize build` (or `kubectl kustomize`) with the root-only load restrictor and no plugins:
 * `--enable-alpha-plugins` is never passed, and `--enable-helm` only when helm is installed and
 * the kustomization inflates charts. Runs with a scrubbed environment, a time limit, an output cap and a memory cap.
 */
export async function renderKustomization(
  node: TargetNode,
  checkoutDir: string,
  tools: Tools,
  refusedSymlinks: readonly string[],
  options: ToolRunOptions,
): Promise<ToolOutcome> {
  const refused = (message: string): ToolOutcome => ({
    outcome: { status: 'failed', message },
    toolMs: 0,
    cacheable: true,
  });
  const refusal = refuseKustomization(node, refusedSymlinks, options.allowRemote ?? false);
  if (refusal) return refused(refusal);
  const linked = unfollowedLinkedFolders(node, checkoutDir);
  if (linked) return refused(linked);
  const archives = refuseChartArchives(node, checkoutDir, options.allowRemote ?? false);
  if (archives) return refused(archives);
  if (!tools.kustomize)
    return {
      outcome: {
        status: 'failed',
        message: 'neither kustomize nor kubectl is installed where Escalator renders; install one of them',
      },
      toolMs: 0,
      cacheable: false,
    };
  const args = [...tools.kustomize.args, '--load-restrictor', 'LoadRestrictionsRootOnly'];
  if (node.needsHelm && tools.helm) args.push('--enable-helm', '--helm-command', tools.helm.command);
  // `--` ends the flags (cobra; kubectl kustomize and kustomize build both take it). kustomize
  // builds helm's own argument list; what it takes from the kustomization is checked before this
  // (src/planners/diff/arguments.ts), since no `--` can be put there.
  args.push('--', node.dir === '' ? '.' : `./${node.dir}`);
  return renderWithTool('kustomize', tools.kustomize.command, args, checkoutDir, options);
}
