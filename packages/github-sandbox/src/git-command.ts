import { spawn } from 'node:child_process';

/**
 * Running the `git` CLI: one process per call. Shared by `GitRepository` (git.ts) and the
 * long-lived object reader (git-batch.ts), so that neither imports the other.
 */

/** A git command failed; `stderr` says why. */
export class GitCommandError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (exit ${code}): ${stderr.trim()}`);
    this.name = 'GitCommandError';
  }
}

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (e.g. 1 for `merge-base --is-ancestor`). */
  okCodes?: number[];
}

export interface RunResult {
  code: number;
  stdout: Buffer;
}

/** The environment every git process of the simulator runs with: no system config, never a prompt. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', ...extra };
}

export function runGit(args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: gitEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const ok = code === 0 || (code !== null && (options.okCodes ?? []).includes(code));
      if (ok) resolve({ code: code ?? 0, stdout: Buffer.concat(out) });
      else reject(new GitCommandError(args, code, Buffer.concat(err).toString('utf8')));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
