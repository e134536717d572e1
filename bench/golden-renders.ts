/**
 * `npx tsx bench/golden-renders.ts`: what the golden corpora's own kustomize renders cost with Go's
 * garbage collector on (the tools' default) and off (`GOGC=off`, test/support/golden-renders.ts).
 *
 * Renders every side of every kustomize case of `test/golden/config-promote/` (x-before, x-after,
 * y-now, y-expected), each once with the default environment and once with `GOGC=off`, alternating,
 * in one process; the CPU of each render is read from `/proc/self/stat` (the children's user and
 * system time, which grows when a child is reaped), so it runs on Linux only. Prints the CPU both
 * ways, the ratio, and the largest resident size of a render each way (`/usr/bin/time -f %M` when
 * it is installed). Exits non-zero when a render's output differs between the two: the setting may
 * change the cost, never the bytes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { findTools } from '../src/adapters/render/tools.js';
import { goldenRenderEnv } from '../test/support/golden-renders.js';

const corpus = fileURLToPath(new URL('../test/golden/config-promote/', import.meta.url));
const sides = ['x-before', 'x-after', 'y-now', 'y-expected'];

const kustomize = findTools().kustomize;
if (!kustomize) {
  process.stderr.write('neither kustomize nor kubectl is on PATH; install one to run this bench\n');
  process.exit(2);
}

/** User + system seconds of every child reaped so far. */
function childrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const dirs = readdirSync(corpus, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => join(corpus, entry.name))
  // Cases rendered by `helm template` instead (`render.helm`) are left out: helm is cheap to start.
  .filter(
    (dir) =>
      (parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as { render?: { helm?: unknown } }).render?.helm ===
      undefined,
  )
  .flatMap((dir) => sides.map((side) => join(dir, side)))
  .filter((dir) => existsSync(dir));

const timeBinary = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const ways = { default: {}, 'GOGC=off': goldenRenderEnv } as const;
const cpu = { default: 0, 'GOGC=off': 0 };
const peakKb = { default: 0, 'GOGC=off': 0 };
let differing = 0;
const load = loadavg()[0]?.toFixed(2);

for (const dir of dirs) {
  const outputs: string[] = [];
  for (const [way, extra] of Object.entries(ways) as Array<[keyof typeof ways, Record<string, string>]>) {
    const before = childrenCpu();
    const [command, args] = timeBinary
      ? [timeBinary, ['-f', '%M', kustomize.command, ...kustomize.args, dir]]
      : [kustomize.command, [...kustomize.args, dir]];
    const run = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, ...extra } });
    cpu[way] += childrenCpu() - before;
    if (timeBinary) peakKb[way] = Math.max(peakKb[way], Number(run.stderr.trim().split('\n').at(-1)));
    outputs.push(`${run.status}\n${run.stdout}`);
  }
  if (outputs[0] !== outputs[1]) {
    differing += 1;
    process.stderr.write(`${dir}: the output differs between the default and GOGC=off\n`);
  }
}

const per = (way: keyof typeof ways) => ((cpu[way] / dirs.length) * 1000).toFixed(0);
console.log(
  `${dirs.length} kustomize renders each way (${kustomize.version}), load ${load} → ${loadavg()[0]?.toFixed(2)}`,
);
console.log(
  `default:  ${cpu.default.toFixed(2)} CPU-s (${per('default')} ms a render), largest ${(peakKb.default / 1024).toFixed(0)} MiB`,
);
console.log(
  `GOGC=off: ${cpu['GOGC=off'].toFixed(2)} CPU-s (${per('GOGC=off')} ms a render), largest ${(peakKb['GOGC=off'] / 1024).toFixed(0)} MiB`,
);
console.log(
  `ratio GOGC=off / default: ${(cpu['GOGC=off'] / cpu.default).toFixed(2)}×; outputs differing: ${differing}`,
);
process.exit(differing === 0 ? 0 : 1);
