import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DiffSide, RenderOutcome, Target, TargetDiff } from '../../planners/diff/index.js';
import type { DiffRequest } from './diff-thread-main.js';

/** Why a diff did not finish; the target is reported as "not diffed" with this text. */
export class DiffStoppedError extends Error {
  override name = 'DiffStoppedError';
}

export interface DiffThreadOptions {
  /** Threads at most. @default min(2, available cores) */
  threads?: number;
  /** Stop one target's diff after this long. @default 60000 */
  timeoutMs?: number;
  /**
   * Heap of one diff thread; a diff that needs more is stopped. @default a quarter of the memory
   * the process may use (its cgroup limit), at least 128 MiB; 512 MiB where no limit is set. Two
   * threads then hold at most half the container, so a huge diff is "not diffed" rather than the
   * reason the whole worker is killed.
   */
  maxHeapMb?: number;
}

interface Task {
  request: Omit<DiffRequest, 'id'>;
  resolve: (diff: TargetDiff) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  task?: { id: number; timer: NodeJS.Timeout } & Task;
}

/**
 * The thread's entry. The built product is JavaScript; under tsx or vitest this module is
 * TypeScript, and a worker thread does not inherit their loader (nor take `--import`), so the
 * thread registers tsx's loader itself before importing the TypeScript entry.
 */
function threadEntry(): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts'))
    return { entry: new URL('./diff-thread-main.js', import.meta.url), eval: false };
  // tsx's ESM entry, found from this package (require.resolve would pick its CommonJS one).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const main = new URL('./diff-thread-main.ts', import.meta.url).href;
  return {
    entry: `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(main)}); })`,
    eval: true,
  };
}

/** A quarter of the process's memory limit in MiB (at least 128), or 512 without a limit. */
function defaultHeapMb(): number {
  // process.constrainedMemory() reads the cgroup limit; 0 or a huge value means none is set.
  const limit = process.constrainedMemory?.() ?? 0;
  if (!limit || limit >= 2 ** 50) return 512;
  return Math.max(128, Math.floor(limit / 4 / 1024 / 1024));
}

/**
 * Diffs run in worker threads, never on the event loop that renews BullMQ locks and answers
 * webhooks: a pull request whose diff takes seconds then costs a thread those seconds, not the
 * process. Each diff has a time limit and each thread a heap limit; a diff past either is stopped
 * (its thread is terminated and replaced) and the target is reported as not diffed.
 * Idle threads do not keep the process alive.
 */
export class DiffThreads {
  private readonly slots = new Set<Slot>();
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private closed = false;
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;

  constructor(options: DiffThreadOptions = {}) {
    this.threads = Math.max(1, options.threads ?? Math.min(2, availableParallelism()));
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxHeapMb = options.maxHeapMb ?? defaultHeapMb();
  }

  /**
   * Diff one target in a thread (`diffSides`). A side is a render or a plain target's files, each
   * with its sources; a bare render outcome is a side with no sources. Rejects with
   * `DiffStoppedError` when the diff ran out of time or memory.
   */
  diff(target: Target, base: DiffSide | RenderOutcome, head: DiffSide | RenderOutcome): Promise<TargetDiff> {
    const side = (input: DiffSide | RenderOutcome): DiffSide =>
      'outcome' in input ? input : { outcome: input, sources: [] };
    if (this.closed) return Promise.reject(new DiffStoppedError('the worker is shutting down'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ request: { target, base: side(base), head: side(head) }, resolve, reject });
      this.dispatch();
    });
  }

  /** Stop every thread (shutdown); diffs in flight are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots];
    this.slots.clear();
    for (const task of this.waiting.splice(0)) task.reject(new DiffStoppedError('the worker is shutting down'));
    await Promise.all(slots.map((slot) => this.stop(slot, 'the worker is shutting down')));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let slot = [...this.slots].find((candidate) => !candidate.task);
      if (!slot) {
        if (this.slots.size >= this.threads) return;
        try {
          slot = this.spawn();
        } catch (error) {
          // No thread can start (a missing entry, no memory): every waiting diff is stopped with why.
          const reason = `the diff thread could not start: ${(error as Error).message}`;
          for (const task of this.waiting.splice(0)) task.reject(new DiffStoppedError(reason));
          return;
        }
      }
      const task = this.waiting.shift() as Task;
      const id = this.nextId++;
      const limit = this.timeoutMs >= 1000 ? `${Math.round(this.timeoutMs / 1000)} s` : `${this.timeoutMs} ms`;
      const timer = setTimeout(() => void this.stop(slot, `the diff took longer than ${limit}`), this.timeoutMs);
      slot.task = { ...task, id, timer };
      try {
        slot.worker.ref();
        slot.worker.postMessage({ id, ...task.request } satisfies DiffRequest);
      } catch (error) {
        void this.stop(slot, `the diff could not be handed to its thread: ${(error as Error).message}`);
      }
    }
  }

  private spawn(): Slot {
    const { entry, eval: evaluate } = threadEntry();
    const worker = new Worker(entry, { eval: evaluate, resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
    const slot: Slot = { worker };
    worker.on('message', (message: { id: number; diff?: TargetDiff; error?: string }) => {
      const task = slot.task;
      if (!task || task.id !== message.id) return;
      clearTimeout(task.timer);
      slot.task = undefined;
      worker.unref();
      if (message.diff) task.resolve(message.diff);
      else task.reject(new Error(message.error ?? 'the diff thread answered nothing'));
      this.dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const reason =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the diff needed more than ${this.maxHeapMb} MiB of memory`
          : `the diff thread failed: ${error.message}`;
      void this.stop(slot, reason);
    });
    worker.on('exit', () => {
      if (this.slots.has(slot)) void this.stop(slot, 'the diff thread exited');
    });
    this.slots.add(slot);
    return slot;
  }

  /** Terminate a thread, reject its diff with `reason`, and let the next diff start on a new thread. */
  private async stop(slot: Slot, reason: string): Promise<void> {
    this.slots.delete(slot);
    const task = slot.task;
    slot.task = undefined;
    if (task) {
      clearTimeout(task.timer);
      task.reject(new DiffStoppedError(reason));
    }
    await slot.worker.terminate();
    this.dispatch();
  }
}
