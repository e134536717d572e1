import { realpathSync } from 'node:fs';
import type { RenderOutcome, TargetNode } from '../../planners/diff/index.js';
import { cleanToolError, runTool, scrubbedEnv } from './exec.js';
import type { Tools } from './tools.js';

export interface ToolRunOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Private HOME for the tool. */
  home: string;
  /** PATH for the tool. */
  path: string | undefined;
  /** Allow remote resources (`https://…`, `git@…`, `github.com/…?ref=`). @default false */
  allowRemote?: boolean;
}

export interface ToolOutcome {
  outcome: RenderOutcome;
  /** Time spent in the tool process. */
  toolMs: number;
  /** Deterministic enough to cache (not a timeout, not a missing tool). */
  cacheable: boolean;
}

/** Refusals that need no tool run: plugins, paths outside the repository, remote resources, symlinks that left the checkout. */
export function refuseKustomization(node: TargetNode, refusedSymlinks: readonly string[], allowRemote: boolean): string | undefined {
  if (node.plugins.length > 0) return `refused: Escalator never runs exec or container plugins (${node.plugins.join('; ')})`;
  if (node.outside && node.outside.length > 0) return `refused: Escalator never reads outside the repository (${node.outside.join('; ')}); keep everything the overlay uses inside the repository`;
  if (node.remote.length > 0 && !allowRemote) return `refused: remote resources are not fetched (${node.remote.join(', ')}); vendor them into the repository`;
  const links = refusedSymlinks.filter((link) => node.inputFiles.includes(link) || node.inputDirs.some((dir) => dir === '' || link.startsWith(`${dir}/`)) || link.startsWith(`${node.dir}/`));
  if (links.length > 0) return `refused: symbolic links point outside the repository (${links.join(', ')})`;
  return undefined;
}

/**
 * `kustomize build` (or `kubectl kustomize`) with the root-only load restrictor and no plugins:
 * `--enable-alpha-plugins` is never passed, and `--enable-helm` only when helm is installed and
 * the kustomization inflates charts. Runs with a scrubbed environment, a time limit and an output cap.
 */
export async function renderKustomization(node: TargetNode, checkoutDir: string, tools: Tools, refusedSymlinks: readonly string[], options: ToolRunOptions): Promise<ToolOutcome> {
  const refusal = refuseKustomization(node, refusedSymlinks, options.allowRemote ?? false);
  if (refusal) return { outcome: { status: 'failed', message: refusal }, toolMs: 0, cacheable: true };
  if (!tools.kustomize) return { outcome: { status: 'failed', message: 'neither kustomize nor kubectl is installed where Escalator renders; install one of them' }, toolMs: 0, cacheable: false };
  const args = [...tools.kustomize.args, '--load-restrictor', 'LoadRestrictionsRootOnly'];
  if (node.needsHelm && tools.helm) args.push('--enable-helm', '--helm-command', tools.helm.command);
  args.push(node.dir === '' ? '.' : `./${node.dir}`);
  const result = await runTool(tools.kustomize.command, args, { cwd: checkoutDir, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes, env: scrubbedEnv(options.path, options.home) });
  if (result.timedOut) return { outcome: { status: 'failed', message: `kustomize did not finish within ${Number((options.timeoutMs / 1000).toFixed(1))} s and was stopped` }, toolMs: result.ms, cacheable: false };
  if (result.tooLarge) return { outcome: { status: 'failed', message: `kustomize printed more than ${Math.round(options.maxOutputBytes / 1024 / 1024)} MiB and was stopped` }, toolMs: result.ms, cacheable: true };
  if (result.code !== 0) {
    let message = cleanToolError(result.stderr, checkoutDir);
    try {
      message = cleanToolError(message, realpathSync(checkoutDir));
    } catch {
      // the checkout path has no other spelling
    }
    return { outcome: { status: 'failed', message: message || `kustomize exited with ${result.code}` }, toolMs: result.ms, cacheable: result.code !== null };
  }
  return { outcome: { status: 'ok', yaml: result.stdout }, toolMs: result.ms, cacheable: true };
}
