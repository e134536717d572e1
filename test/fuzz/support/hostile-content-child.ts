/**
 * `node --expose-gc --max-old-space-size=2048 --import tsx hostile-content-child.ts`: serves
 * hostile cases one after another, so the ~1 s of CPU a start costs (tsx and the planners' imports)
 * is paid once for many cases instead of once per case.
 *
 * Each request is one JSON line on stdin, `{"case": name, "calls": [call, …]}`. For each, the child
 * collects garbage (a previous 50 MB case must not weigh on this one's timing), builds the case,
 * prints `{"bytes": n}`, then for each call `{"start": call}` and, once it answered, the call's result
 * line, and last `{"end": name}`. A name it does not know is answered `{"error": …}` and
 * `{"end": name}`. A crash or a hang ends the process; the parent (runHostileCase) records it and
 * sends the remaining calls to a fresh process. The child ends when its stdin closes.
 *
 * The `planted-*` cases are not hostile content and not in `hostileCases` (so neither the test of
 * the cases nor the report reaches them): test/fuzz/hostile-child.test.ts names them to prove the
 * recovery from a hang and a crash. Their PLANTED_CALL hangs or exits; their other calls answer on
 * a one-line file.
 */
import { createInterface } from 'node:readline';
import { IMAGE, PLANTED_CALL, PLANTED_EXIT, hostileCases, runCall, type HostileCall } from './hostile-content.js';

const planted = new Map<string, () => void>([
  // Blocks this thread for good without spending CPU: only the parent's bound ends it.
  ['planted-hang', () => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)],
  [
    'planted-crash',
    () => {
      process.stderr.write(`planted crash in ${PLANTED_CALL}\n`);
      process.exit(PLANTED_EXIT);
    },
  ],
]);

function write(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function serve(name: string, calls: HostileCall[]): void {
  globalThis.gc?.();
  const hostile = hostileCases.find((entry) => entry.name === name);
  const plant = planted.get(name);
  if (!hostile && !plant) {
    write({
      error: `the child knows no hostile case named ${JSON.stringify(name)}; name one of hostileCases in test/fuzz/support/hostile-content.ts`,
    });
    return;
  }
  const text = hostile ? hostile.build() : `image: ${IMAGE}:1.0.0\n`;
  const bytes = Buffer.byteLength(text);
  write({ bytes });
  for (const call of calls) {
    write({ start: call });
    const started = performance.now();
    if (plant && call === PLANTED_CALL) plant();
    const { outcome, detail } = runCall(call, text);
    write({ call, outcome, detail: detail.slice(0, 300), ms: Math.round(performance.now() - started), bytes });
  }
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const request = JSON.parse(line) as { case: string; calls: HostileCall[] };
  serve(request.case, request.calls);
  write({ end: request.case });
}
