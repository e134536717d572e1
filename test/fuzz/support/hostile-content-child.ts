/**
 * `node --import tsx hostile-content-child.ts <case> <call,call,…>`: builds one hostile case and
 * runs the planner calls named, in order, printing one JSON line per call as it finishes.
 * A crash or a hang ends the process; the parent (runHostileCase) records it and starts another
 * process for the remaining calls.
 */
import { hostileCalls, hostileCases, runCall, type HostileCall } from './hostile-content.js';

const [name, list = hostileCalls.join(',')] = process.argv.slice(2);
const hostile = hostileCases.find((entry) => entry.name === name);
if (!hostile) {
  process.stderr.write(`unknown case ${String(name)}\n`);
  process.exit(2);
}
const text = hostile.build();
const bytes = Buffer.byteLength(text);
process.stdout.write(`${JSON.stringify({ bytes })}\n`);
for (const call of list.split(',') as HostileCall[]) {
  process.stdout.write(`${JSON.stringify({ start: call })}\n`);
  const started = performance.now();
  const { outcome, detail } = runCall(call, text);
  process.stdout.write(
    `${JSON.stringify({ call, outcome, detail: detail.slice(0, 300), ms: Math.round(performance.now() - started), bytes })}\n`,
  );
}
