import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { GitCommandError, gitEnv } from './git-command.js';

/** An object as `git cat-file --batch-command` describes it; `body` only for `contents`. */
export interface BatchObject {
  oid: string;
  type: string;
  size: number;
  body?: Buffer;
}

interface Request {
  command: 'info' | 'contents';
  resolve: (value: BatchObject | null) => void;
  reject: (error: Error) => void;
}

const ARGS = ['cat-file', '--batch-command'];

/**
 * One long-lived `git cat-file --batch-command` per repository: object reads without a process
 * each. Requests are written in order and git answers them in order (one queue, no reordering).
 * The process starts on the first request, is closed by `close()` (when the simulator stops) and
 * starts again if anything reads afterwards; while idle it does not keep Node running.
 */
export class CatFileBatch {
  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly pending: Request[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private stderr = '';

  constructor(private readonly gitDir: string) {}

  /** Type and size of the object `name` names (a SHA, `<sha>^{tree}`, …); null when there is none. */
  info(name: string): Promise<BatchObject | null> {
    return this.request('info', name);
  }

  /** Like `info`, with the object's content. */
  contents(name: string): Promise<BatchObject | null> {
    return this.request('contents', name);
  }

  /** Ends the process once it has answered what was asked; resolves when it has exited. */
  close(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    this.child = null;
    return new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('close', () => resolve());
      // Held until git has gone: an idle reader is unref'd, and a process whose last work is this
      // close (the sandbox stopping on SIGTERM) would otherwise end with the promise unsettled,
      // skipping what comes after it (removing the run's Redis keys).
      child.ref();
      holdOpen(child.stdout, true);
      child.stdin.end();
    });
  }

  private request(command: Request['command'], name: string): Promise<BatchObject | null> {
    if (name === '' || /[\n\r\0]/.test(name)) {
      return Promise.reject(new Error(`Cannot ask git cat-file about ${JSON.stringify(name)}: not one line.`));
    }
    return new Promise((resolve, reject) => {
      const child = this.child ?? this.start();
      if (this.pending.length === 0) holdOpen(child.stdout, true);
      this.pending.push({ command, resolve, reject });
      child.stdin.write(`${command} ${name}\n`);
    });
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn('git', ARGS, { env: gitEnv({ GIT_DIR: this.gitDir }), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.buffer = Buffer.alloc(0);
    this.stderr = '';
    child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.stdin.on('error', () => undefined);
    const failed = (code: number | null, reason: string) => {
      if (this.child === child) this.child = null;
      const waiting = this.pending.splice(0);
      const error = new GitCommandError(ARGS, code, reason);
      for (const request of waiting) request.reject(error);
    };
    child.on('error', (error) => failed(null, error.message));
    child.on('close', (code) => failed(code, this.stderr || 'git cat-file stopped before answering'));
    // Idle, it must not keep the process (a test worker, a script) alive; `request` refs it again.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) holdOpen(stream, false);
    return child;
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const request = this.pending[0];
      if (!request) break;
      const newline = this.buffer.indexOf(0x0a);
      if (newline === -1) break;
      const header = this.buffer.toString('utf8', 0, newline);
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.answer(newline + 1, null);
        continue;
      }
      const [oid = '', type = '', size = ''] = header.split(' ');
      const object: BatchObject = { oid, type, size: Number(size) };
      if (request.command === 'info') {
        this.answer(newline + 1, object);
        continue;
      }
      const end = newline + 1 + object.size;
      if (this.buffer.length < end + 1) break;
      object.body = Buffer.from(this.buffer.subarray(newline + 1, end));
      this.answer(end + 1, object);
    }
    if (this.pending.length === 0 && this.child) holdOpen(this.child.stdout, false);
  }

  private answer(consumed: number, value: BatchObject | null): void {
    this.buffer = this.buffer.subarray(consumed);
    this.pending.shift()?.resolve(value);
  }
}

/** Whether a pipe keeps Node running (pipes to a child are sockets, which can be ref'd and unref'd). */
function holdOpen(stream: object, hold: boolean): void {
  const socket = stream as { ref?: () => void; unref?: () => void };
  if (hold) socket.ref?.();
  else socket.unref?.();
}
