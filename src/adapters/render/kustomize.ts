import { lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { planRefusal, type TargetNode } from '../../planners/diff/index.js';
import { renderWithTool, type ToolOutcome, type ToolRunOptions } from './exec.js';
import { refuseChartArchives } from './helm.js';
import type { Tools } from './tools.js';

/** Refusals that need no tool run: unreadable kustomizations, plugins, paths outside the repository, remote resources, symlinks that left the checkout. */
export function refuseKustomization(node: TargetNode, refusedSymlinks: readonly string[], allowRemote: boolean): string | undefined {
  const planned = planRefusal(node, allowRemote);
  if (planned) return planned;
  const links = refusedSymlinks.filter((link) => node.inputFiles.includes(link) || node.inputDirs.some((dir) => dir === '' || link.startsWith(`${dir}/`)) || link.startsWith(`${node.dir}/`));
  if (links.length > 0) return `refused: symbolic links point outside the repository (${links.join(', ')})`;
  return undefined;
}

/**
 * Symbolic links to folders among a target's inputs (or on the way to them), when its graph was
 * built without knowing which paths are links: kustomize would walk that folder, which the
 * pre-check did not, so it cannot tell what the folder makes kustomize read.
 */
export function unfollowedLinkedFolders(node: TargetNode, checkoutDir: string): string[] {
  if (node.linksFollowed || checkoutDir === '') return [];
  const seen = new Map<string, boolean>();
  const linkedFolder = (path: string): boolean => {
    const known = seen.get(path);
    if (known !== undefined) return known;
    let result: boolean;
    try {
      result = lstatSync(join(checkoutDir, path)).isSymbolicLink() && statSync(join(checkoutDir, path)).isDirectory();
    } catch {
      result = false; // missing, or a dangling link: kustomize reads nothing through it
    }
    seen.set(path, result);
    return result;
  };
  const found = new Set<string>();
  for (const input of [...node.inputFiles, ...node.inputDirs, node.dir]) {
    const parts = input.split('/');
    for (let length = 1; length <= parts.length; length++) {
      const prefix = parts.slice(0, length).join('/');
      if (prefix !== '' && linkedFolder(prefix)) found.add(prefix);
    }
  }
  return [...found].sort();
}

/**
 * `kustomize build` (or `kubectl kustomize`) with the root-only load restrictor and no plugins:
 * `--enable-alpha-plugins` is never passed, and `--enable-helm` only when helm is installed and
 * the kustomization inflates charts. Runs with a scrubbed environment, a time limit, an output cap and a memory cap.
 */
export async function renderKustomization(node: TargetNode, checkoutDir: string, tools: Tools, refusedSymlinks: readonly string[], options: ToolRunOptions): Promise<ToolOutcome> {
  const refused = (message: string): ToolOutcome => ({ outcome: { status: 'failed', message }, toolMs: 0, cacheable: true });
  const refusal = refuseKustomization(node, refusedSymlinks, options.allowRemote ?? false);
  if (refusal) return refused(refusal);
  const linked = unfollowedLinkedFolders(node, checkoutDir);
  if (linked.length > 0) return refused(`refused: Escalator cannot tell what this target reads (it reads through symbolic links to folders: ${linked.join(', ')}); link the files, not the folder, or list the folder itself`);
  const archives = refuseChartArchives(node, checkoutDir, options.allowRemote ?? false);
  if (archives) return refused(archives);
  if (!tools.kustomize) return { outcome: { status: 'failed', message: 'neither kustomize nor kubectl is installed where Escalator renders; install one of them' }, toolMs: 0, cacheable: false };
  const args = [...tools.kustomize.args, '--load-restrictor', 'LoadRestrictionsRootOnly'];
  if (node.needsHelm && tools.helm) args.push('--enable-helm', '--helm-command', tools.helm.command);
  args.push(node.dir === '' ? '.' : `./${node.dir}`);
  return renderWithTool('kustomize', tools.kustomize.command, args, checkoutDir, options);
}
