import { execFileSync } from 'node:child_process';
import { findExecutable } from './exec.js';

/** The renderers found on this machine. */
export interface Tools {
  /** How kustomizations are built: `kustomize build` or `kubectl kustomize`; undefined when neither exists. */
  kustomize?: { command: string; args: string[]; version: string };
  helm?: { command: string; version: string };
}

export interface ToolPaths {
  /** Search this PATH. @default process.env.PATH */
  path?: string;
  /** Explicit binaries (tests); `null` forces "not installed". */
  kustomize?: string | null;
  kubectl?: string | null;
  helm?: string | null;
}

const cache = new Map<string, Tools>();

function versionOf(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, {
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '' },
    })
      .toString('utf8')
      .trim()
      .split('\n')
      .join(' ');
  } catch {
    return 'unknown';
  }
}

/** Find kustomize (else kubectl) and helm once per process and PATH; versions go into render cache keys. */
export function findTools(paths: ToolPaths = {}): Tools {
  const path = paths.path ?? process.env.PATH;
  const key = JSON.stringify([path, paths.kustomize, paths.kubectl, paths.helm]);
  const known = cache.get(key);
  if (known) return known;
  const tools: Tools = {};
  const kustomize = paths.kustomize === null ? undefined : (paths.kustomize ?? findExecutable('kustomize', path));
  const kubectl = paths.kubectl === null ? undefined : (paths.kubectl ?? findExecutable('kubectl', path));
  if (kustomize)
    tools.kustomize = {
      command: kustomize,
      args: ['build'],
      version: `kustomize ${versionOf(kustomize, ['version'])}`,
    };
  else if (kubectl)
    tools.kustomize = {
      command: kubectl,
      args: ['kustomize'],
      version: `kubectl ${versionOf(kubectl, ['version', '--client'])}`,
    };
  const helm = paths.helm === null ? undefined : (paths.helm ?? findExecutable('helm', path));
  if (helm) tools.helm = { command: helm, version: `helm ${versionOf(helm, ['version', '--short'])}` };
  cache.set(key, tools);
  return tools;
}
