import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { RenderOutcome } from '../../planners/diff/index.js';
import {
  isolateRun,
  isolationUnavailableMessage,
  probeIsolation,
  sandboxFailureMessage,
  SETUP_FAILED,
  type IsolatedRun,
  type IsolationSettings,
  type Overlay,
} from './isolation.js';

export { findExecutable } from './isolation.js';

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  tooLarge: boolean;
  /** Stopped because the tool's processes together held more memory than `maxMemoryBytes`. */
  overMemory: boolean;
  ms: number;
}

export interface RunToolOptions {
  cwd: string;
  /** Kill the tool (and its children) after this long. */
  timeoutMs: number;
  /** Kill the tool when its output grows past this. */
  maxOutputBytes: number;
  /**
   * Kill the tool when its processes (it and every process it started) hold more resident memory
   * than this together. Read from /proc every {@link MEMORY_POLL_MS} ms, so a tool can pass it by
   * what it allocates in that time; not enforced where there is no /proc (not Linux).
   */
  maxMemoryBytes: number;
  env: Record<string, string>;
}

/**
 * The environment tools run with: PATH and a private HOME and cache/config folders, nothing else —
 * no tokens, no kubeconfig, no plugin folders of the machine. The folders are created where the
 * tool runs (inside its sandbox), not here.
 */
export function scrubbedEnv(path: string | undefined, home: string): Record<string, string> {
  return {
    PATH: path ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    KUBECONFIG: join(home, 'no-kubeconfig'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    KUSTOMIZE_PLUGIN_HOME: join(home, 'plugins'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    HELM_PLUGINS: join(home, 'plugins'),
  };
}

/** How often a running tool's memory is read. */
export const MEMORY_POLL_MS = 50;

/** Resident memory of one process, from /proc/<pid>/status; 0 when it is gone or there is no /proc. */
function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The children of every thread of a process (a Go tool starts helm from any of its threads). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').split(' ').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** Resident memory of a process and all its descendants together. */
function treeResidentBytes(pid: number): number {
  let total = 0;
  const seen = new Set<number>();
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.pop() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    total += residentBytes(next);
    pending.push(...childrenOf(next));
  }
  return total;
}

/**
 * Run a tool with a time limit, an output cap and a memory cap; its whole process group is killed
 * when it passes any of them.
 */
export function runTool(command: string, args: string[], options: RunToolOptions): Promise<ToolResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let tooLarge = false;
    let overMemory = false;
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const watch = setInterval(() => {
      if (child.pid === undefined || overMemory) return;
      if (treeResidentBytes(child.pid) > options.maxMemoryBytes) {
        overMemory = true;
        kill();
      }
    }, MEMORY_POLL_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxOutputBytes) {
        if (!tooLarge) {
          tooLarge = true;
          kill();
        }
        return;
      }
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.reduce((sum, part) => sum + part.length, 0) < 64 * 1024) err.push(chunk);
    });
    const finish = (code: number | null, spawnError?: Error): void => {
      clearTimeout(timer);
      clearInterval(watch);
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: spawnError ? spawnError.message : Buffer.concat(err).toString('utf8'),
        timedOut,
        tooLarge,
        overMemory,
        ms: performance.now() - started,
      });
    };
    child.on('error', (error) => finish(null, error));
    child.on('close', (code) => finish(code));
  });
}

/**
 * Make a tool's error readable and stable: drop klog prefixes (timestamps, pids) and Go quoting,
 * and replace the checkout's absolute path with paths relative to the repository.
 */
export function cleanToolError(stderr: string, checkoutDir: string): string {
  const lines = stderr.split('\n').map((line) => {
    const klog = /^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] "([^"]*)" err="(.*)"\s*$/.exec(line);
    if (klog)
      return `${klog[1] ?? ''}: ${(klog[2] ?? '')
        .replace(/\\(["\\])/g, '$1')
        .replace(/\\n/g, '\n')
        .replace(/\\t/g, '\t')}`;
    return line.replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] /, '');
  });
  let text = lines
    .join('\n')
    .trim()
    .replace(/^Error: /, '');
  for (const prefix of [`${checkoutDir}/`, checkoutDir])
    text = text.split(prefix).join(prefix.endsWith('/') ? '' : '.');
  return text;
}

/** How kustomize and helm run: limits, and the private HOME and PATH they see. */
export interface ToolRunOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  maxMemoryBytes: number;
  /** Private HOME for the tool. */
  home: string;
  /** PATH for the tool. */
  path: string | undefined;
  /** Allow remote resources (`https://…`, `git@…`, `github.com/…?ref=`). @default false */
  allowRemote?: boolean;
  /**
   * How the tool is kept from the network and from files outside its checkout
   * (src/adapters/render/isolation.ts). @default { mode: 'namespace' }
   */
  isolation?: IsolationSettings;
}

export interface ToolOutcome {
  outcome: RenderOutcome;
  /** Time spent in the tool process. */
  toolMs: number;
  /** Deterministic enough to cache (not a timeout, not a missing tool). */
  cacheable: boolean;
}

function mebibytes(bytes: number): string {
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
}

/**
 * Run a render tool in a checkout with the scrubbed environment, inside its isolation (no network,
 * only the checkout visible), with every limit, and say in one sentence what stopped it: isolation
 * not available here, the time limit, the output cap, the memory cap, or its own error (cleaned of
 * the checkout's absolute path, under either spelling of it).
 */
export async function renderWithTool(
  name: string,
  command: string,
  args: string[],
  checkoutDir: string,
  options: ToolRunOptions,
  readOnlyDirs: readonly string[] = [],
  overlays: readonly Overlay[] = [],
): Promise<ToolOutcome> {
  const settings = options.isolation ?? {};
  const refused = (message: string): ToolOutcome => ({
    outcome: { status: 'failed', message },
    toolMs: 0,
    cacheable: false,
  });
  const status = await probeIsolation(settings);
  if (!status.available) return refused(isolationUnavailableMessage(settings.mode ?? 'namespace', status.reason));
  let isolated: IsolatedRun;
  try {
    isolated = isolateRun(
      settings,
      command,
      args,
      checkoutDir,
      scrubbedEnv(options.path, options.home),
      readOnlyDirs,
      overlays,
    );
  } catch (error) {
    return refused(
      `not rendered: the render sandbox could not be set up (${(error as Error).message}); see docs/operations.md`,
    );
  }
  let result: ToolResult;
  try {
    result = await runTool(isolated.command, isolated.args, {
      cwd: isolated.cwd,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      maxMemoryBytes: options.maxMemoryBytes,
      env: isolated.env,
    });
  } finally {
    isolated.dispose();
  }
  const failed = (message: string, cacheable: boolean): ToolOutcome => ({
    outcome: { status: 'failed', message },
    toolMs: result.ms,
    cacheable,
  });
  if (result.timedOut)
    return failed(
      `${name} did not finish within ${Number((options.timeoutMs / 1000).toFixed(1))} s and was stopped`,
      false,
    );
  if (result.tooLarge)
    return failed(`${name} printed more than ${mebibytes(options.maxOutputBytes)} and was stopped`, true);
  if (result.overMemory)
    return failed(`${name} used more than ${mebibytes(options.maxMemoryBytes)} of memory and was stopped`, true);
  if (result.code !== 0) {
    const sandbox =
      isolated.command !== command && (result.code === SETUP_FAILED || /^(unshare|setpriv): /.test(result.stderr))
        ? sandboxFailureMessage(result.stderr)
        : undefined;
    if (sandbox) return failed(sandbox, false);
    let message = cleanToolError(result.stderr, isolated.checkoutDir);
    for (const spelling of new Set([checkoutDir, realpathOrSelf(checkoutDir), realpathOrSelf(isolated.checkoutDir)]))
      if (spelling) message = cleanToolError(message, spelling);
    return failed(message || `${name} exited with ${result.code}`, result.code !== null);
  }
  return { outcome: { status: 'ok', yaml: result.stdout }, toolMs: result.ms, cacheable: true };
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // gone already (a private copy), or no other spelling
  }
}
