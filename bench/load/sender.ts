/**
 * Registry events as a registry or a CI pipeline sends them, timed: `POST /api/v1/images` (CI API,
 * bearer token) or `POST /registry/distribution` (a CNCF Distribution notification envelope with
 * one tagged OCI index push). Each request is sent once (no retry): anything but 202 is counted.
 *
 * The sending runs in a child process of its own (bench/load/sender-process.ts) that does nothing
 * else, so the simulator's work in the bench process does not delay the requests or their timers:
 * the time is from the request's start to the end of the answer's body, in that child. The child
 * gets the whole schedule up front and sends open loop (each event at its time, whatever the answers).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { tagOf } from './fixture.js';

export type Source = 'ci' | 'distribution';

export interface Accepted {
  image: string;
  version: number;
  at: number;
}

export class ImageSender {
  readonly latencies = new Map<Source, number[]>([
    ['ci', []],
    ['distribution', []],
  ]);
  /** HTTP status (or the error's name) → count, for everything but 202. */
  readonly failures = new Map<string, number>();
  readonly accepted: Accepted[] = [];
  /** Events whose answer never came (timeout, connection reset): Escalator may or may not have taken them. */
  readonly unanswered: Array<{ image: string; version: number }> = [];
  /** Highest version accepted (202) per image. */
  readonly acceptedVersion = new Map<string, number>();
  sent = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly webUrl: string,
    private readonly tokens: { ci: string; registry: string },
  ) {}

  get pending(): number {
    return this.inFlight.size;
  }

  /** Send one event in the background. */
  send(image: string, version: number, source: Source): void {
    this.sent++;
    const sending = this.post(image, version, source).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race([...this.inFlight]);
  }

  get failed(): number {
    return [...this.failures.values()].reduce((sum, n) => sum + n, 0);
  }

  private async post(image: string, version: number, source: Source): Promise<void> {
    const tag = tagOf(version);
    const request = source === 'ci' ? this.ciRequest(image, tag) : this.distributionRequest(image, tag);
    const started = performance.now();
    try {
      const response = await fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      this.latencies.get(source)?.push(performance.now() - started);
      if (response.status === 202) {
        this.accepted.push({ image, version, at: Date.now() });
        this.acceptedVersion.set(image, Math.max(this.acceptedVersion.get(image) ?? 0, version));
      } else this.failures.set(`HTTP ${response.status}`, (this.failures.get(`HTTP ${response.status}`) ?? 0) + 1);
    } catch (error) {
      const name = `no answer (${(error as Error).name})`;
      this.unanswered.push({ image, version });
      this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
    }
  }

  private ciRequest(image: string, tag: string) {
    return {
      url: `${this.webUrl}/api/v1/images`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.tokens.ci}` },
      body: JSON.stringify({ image: `${image}:${tag}` }),
    };
  }

  private distributionRequest(image: string, tag: string) {
    const [host, ...path] = image.split('/');
    const repository = path.join('/');
    const digest = `sha256:${createHash('sha256').update(`${image}:${tag}`).digest('hex')}`;
    const envelope = {
      events: [
        {
          id: createHash('sha1').update(digest).digest('hex'),
          timestamp: new Date().toISOString(),
          action: 'push',
          target: {
            mediaType: 'application/vnd.oci.image.index.v1+json',
            size: 1_234,
            digest,
            length: 1_234,
            repository,
            url: `https://${host}/v2/${repository}/manifests/${digest}`,
            tag,
          },
          request: {
            id: createHash('sha1').update(`${digest}:request`).digest('hex'),
            addr: '10.0.0.7:41822',
            host,
            method: 'PUT',
            useragent: 'buildkit/v0.16',
          },
          actor: { name: 'ci' },
          source: { addr: 'registry-0:5000', instanceID: 'load' },
        },
      ],
    };
    return {
      url: `${this.webUrl}/registry/distribution`,
      headers: {
        'content-type': 'application/vnd.docker.distribution.events.v1+json',
        authorization: `Bearer ${this.tokens.registry}`,
      },
      body: JSON.stringify(envelope),
    };
  }
}

/** One event of a schedule: send `image:1.<version>.0` through `source`, `offsetMs` after the start. */
export interface ScheduledEvent {
  offsetMs: number;
  image: string;
  version: number;
  source: Source;
}

/** What the sender process reports at the end. */
export interface SenderResult {
  /** When the schedule started (`Date.now()` ms), right after the process received it. */
  startedAt: number;
  sent: number;
  latencies: Record<Source, number[]>;
  failures: Record<string, number>;
  accepted: Accepted[];
  /** Events whose answer never came: their outcome is unknown to the sender. */
  unanswered: Array<{ image: string; version: number }>;
  /** How late the sends left against their schedule (ms), p50 / p99 / max. */
  lateness: { p50: number; p99: number; max: number };
  /** Event-loop delay of the sender process (ms), p99 / max. */
  lag: { p99: number; max: number };
  /** When the last event left and when the last answer came (`Date.now()` ms). */
  lastSentAt: number;
  lastAnsweredAt: number;
}

export type SenderMessage =
  | { kind: 'started'; startedAt: number }
  | { kind: 'progress'; sent: number; accepted: number; failed: number }
  | { kind: 'done'; result: SenderResult }
  | { kind: 'error'; message: string };

/** The sender child process: `start()` hands it the schedule; `result` resolves when every answer is in. */
export class SenderProcess {
  readonly progress = { sent: 0, accepted: 0, failed: 0 };
  readonly result: Promise<SenderResult>;
  /** When the schedule's clock starts (`Date.now()` ms), as soon as the process has the schedule. */
  readonly started: Promise<number>;
  private readonly child: ChildProcess;

  constructor(webUrl: string, tokens: { ci: string; registry: string }, schedule: ScheduledEvent[]) {
    this.child = fork(resolve(import.meta.dirname, 'sender-process.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let onStart: (at: number) => void = () => {};
    this.started = new Promise((resolvePromise) => {
      onStart = resolvePromise;
    });
    this.result = new Promise((resolvePromise, reject) => {
      this.child.on('message', (message: SenderMessage) => {
        if (message.kind === 'started') onStart(message.startedAt);
        else if (message.kind === 'progress')
          Object.assign(this.progress, { sent: message.sent, accepted: message.accepted, failed: message.failed });
        else if (message.kind === 'done') resolvePromise(message.result);
        else reject(new Error(`the sender process failed: ${message.message}`));
      });
      this.child.once('exit', (code) =>
        reject(new Error(`the sender process exited (code ${code}) before reporting; its output above says why`)),
      );
    });
    this.child.send({ webUrl, tokens, schedule });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Stop the child if it is still running (after `result`, it has exited by itself). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
