import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
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
  /** The helm binary to use instead of the one on PATH. @default process.env.ESCALATOR_HELM_PATH */
  helmPath?: string;
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
  const helmPath = paths.helmPath ?? process.env.ESCALATOR_HELM_PATH;
  const key = JSON.stringify([path, paths.kustomize, paths.kubectl, paths.helm, helmPath]);
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
  // ESCALATOR_HELM_PATH names one binary (a directory holding `helm` works too); when it is not an
  // executable, helm counts as missing and each chart's section says helm is not installed.
  const named = helmPath ? (findExecutable('helm', helmPath) ?? executableFile(helmPath)) : undefined;
  const helm = paths.helm === null ? undefined : (paths.helm ?? (helmPath ? named : findExecutable('helm', path)));
  if (helm) tools.helm = { command: helm, version: `helm ${versionOf(helm, ['version', '--short'])}` };
  cache.set(key, tools);
  return tools;
}

function executableFile(file: string): string | undefined {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}
