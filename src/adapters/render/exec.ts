import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  tooLarge: boolean;
  ms: number;
}

export interface RunToolOptions {
  cwd: string;
  /** Kill the tool (and its children) after this long. */
  timeoutMs: number;
  /** Kill the tool when its output grows past this. */
  maxOutputBytes: number;
  env: Record<string, string>;
}

/** Find an executable on a PATH string, like `command -v`. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The environment tools run with: PATH and a private HOME and cache/config folders, nothing else —
 * no tokens, no kubeconfig, no plugin folders of the machine.
 */
export function scrubbedEnv(path: string | undefined, home: string): Record<string, string> {
  for (const sub of ['cache', 'config', 'data', 'plugins']) mkdirSync(join(home, sub), { recursive: true });
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

/** Run a tool with a time limit and an output cap; its whole process group is killed on either. */
export function runTool(command: string, args: string[], options: RunToolOptions): Promise<ToolResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let tooLarge = false;
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
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: spawnError ? spawnError.message : Buffer.concat(err).toString('utf8'),
        timedOut,
        tooLarge,
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
    if (klog) return `${klog[1] ?? ''}: ${(klog[2] ?? '').replace(/\\(["\\])/g, '$1').replace(/\\n/g, '\n').replace(/\\t/g, '\t')}`;
    return line.replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] /, '');
  });
  let text = lines.join('\n').trim().replace(/^Error: /, '');
  for (const prefix of [`${checkoutDir}/`, checkoutDir]) text = text.split(prefix).join(prefix.endsWith('/') ? '' : '.');
  return text;
}
