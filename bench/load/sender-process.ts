/**
 * The sender child process of the load runs (started by `SenderProcess`, bench/load/sender.ts):
 * 1. receive `{webUrl, tokens, schedule}` over IPC
 * 2. send every event at its time, open loop, with `ImageSender`; report progress every second
 * 3. once every answer is in, report the latencies, failures and accepted events, and exit
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sleep, summarize } from '../support/stats.js';
import { ImageSender, type ScheduledEvent, type SenderMessage, type SenderResult } from './sender.js';

const LAG_RESOLUTION_MS = 10;

function post(message: SenderMessage): Promise<void> {
  return new Promise((resolve) => process.send?.(message, () => resolve()) ?? resolve());
}

process.once(
  'message',
  (input: { webUrl: string; tokens: { ci: string; registry: string }; schedule: ScheduledEvent[] }) => {
    void run(input).then(
      () => process.exit(0),
      async (error: Error) => {
        await post({ kind: 'error', message: error.stack ?? error.message });
        process.exit(1);
      },
    );
  },
);

async function run(input: {
  webUrl: string;
  tokens: { ci: string; registry: string };
  schedule: ScheduledEvent[];
}): Promise<void> {
  const sender = new ImageSender(input.webUrl, input.tokens);
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  lag.enable();
  const lateness: number[] = [];
  const startedAt = Date.now() + 100;
  await post({ kind: 'started', startedAt });
  const report = setInterval(
    () => void post({ kind: 'progress', sent: sender.sent, accepted: sender.accepted.length, failed: sender.failed }),
    1_000,
  );
  for (const event of input.schedule) {
    const due = startedAt + event.offsetMs;
    const wait = due - Date.now();
    if (wait > 1) await sleep(wait);
    lateness.push(Math.max(0, Date.now() - due));
    sender.send(event.image, event.version, event.source);
  }
  const lastSentAt = Date.now();
  await sender.settle();
  const lastAnsweredAt = Date.now();
  clearInterval(report);
  lag.disable();
  const late = summarize(lateness);
  const result: SenderResult = {
    startedAt,
    sent: sender.sent,
    latencies: { ci: sender.latencies.get('ci') ?? [], distribution: sender.latencies.get('distribution') ?? [] },
    failures: Object.fromEntries(sender.failures),
    accepted: sender.accepted,
    unanswered: sender.unanswered,
    lateness: { p50: late.p50, p99: late.p99, max: late.max },
    // The histogram holds the timer's whole interval: the delay is what exceeds the resolution.
    lag: { p99: lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS, max: lag.max / 1e6 - LAG_RESOLUTION_MS },
    lastSentAt,
    lastAnsweredAt,
  };
  await post({ kind: 'done', result });
}
