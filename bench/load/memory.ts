/**
 * Memory of the Escalator processes over a load run: RSS from `/proc/<pid>/status` (VmRSS, read
 * even while the process is busy) and V8 `heapUsed` from the process's own `GET /metrics`
 * (`escalator_process_nodejs_heap_size_used_bytes`, prom-client's default metrics). Workers listen
 * on a port of their own choosing (`PORT=0`), found in `/proc/<pid>/net/tcp` by the inode of a
 * listening socket the process holds. The bench process (the sandbox simulator and the driver)
 * is sampled too, with `process.memoryUsage()`.
 *
 * Plateau verdict: mean of the last third of the samples against the mean of the middle third
 * (the first third is warm-up), per process and metric.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface Watched {
  name: string;
  pid: number;
}

export interface MemoryReading {
  rssMb: number;
  /** NaN when `/metrics` did not answer in time. */
  heapMb: number;
}

export interface MemorySample {
  /** Milliseconds since the sampler's origin. */
  t: number;
  phase: string;
  readings: Map<string, MemoryReading>;
}

export interface PlateauLine {
  name: string;
  metric: 'rss' | 'heap';
  middleMb: number;
  lastMb: number;
  ratio: number;
}

const MB = 1024 * 1024;
/** A last third at most this much above the middle third counts as a plateau. */
export const PLATEAU_RATIO = 1.1;

/** TCP ports `pid` listens on (IPv4 and IPv6), from the socket inodes among its file descriptors. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // the descriptor closed while we looked
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN; field 9 is the socket's inode
      if (fields[3] === '0A' && fields[9] && inodes.has(fields[9]))
        ports.push(Number.parseInt(fields[1]?.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export class MemorySampler {
  readonly samples: MemorySample[] = [];
  /** Names in the order they were first seen (the table's columns). */
  readonly names: string[] = [];
  phase = 'setup';
  private readonly ports = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly watched: () => Watched[],
    private readonly everyMs: number,
    private readonly origin: number,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.sampleOnce().finally(() => {
        this.running = undefined;
      });
    };
    tick();
    this.timer = setInterval(tick, this.everyMs);
  }

  /** Stop sampling after one last sample (only the first call does anything). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.sampleOnce();
  }

  async sampleOnce(): Promise<void> {
    const readings = new Map<string, MemoryReading>();
    const self = process.memoryUsage();
    readings.set('bench', { rssMb: self.rss / MB, heapMb: self.heapUsed / MB });
    await Promise.all(
      this.watched().map(async (process) => {
        readings.set(process.name, { rssMb: rssMb(process.pid), heapMb: await this.heapMb(process.pid) });
      }),
    );
    for (const name of readings.keys()) if (!this.names.includes(name)) this.names.push(name);
    this.samples.push({ t: Date.now() - this.origin, phase: this.phase, readings });
  }

  /** The time series, one row per sample: RSS / heapUsed in MB per process. */
  table(): string[] {
    const columns = this.names;
    const header = `${'t'.padStart(7)}  ${'phase'.padEnd(6)}  ${columns.map((name) => `${name} rss/heap`.padStart(20)).join('')}`;
    const rows = this.samples.map((sample) => {
      const cells = columns.map((name) => {
        const reading = sample.readings.get(name);
        return (reading ? `${fmt(reading.rssMb)} / ${fmt(reading.heapMb)}` : '-').padStart(20);
      });
      return `${`${(sample.t / 1000).toFixed(0)} s`.padStart(7)}  ${sample.phase.padEnd(6)}  ${cells.join('')}`;
    });
    return [header, ...rows];
  }

  /** Mean of the last third of the samples taken in `phase` against the middle third. */
  plateau(phase: string): PlateauLine[] {
    const within = this.samples.filter((sample) => sample.phase === phase);
    const third = Math.floor(within.length / 3);
    if (third === 0) return [];
    const middle = within.slice(third, 2 * third);
    const last = within.slice(within.length - third);
    const lines: PlateauLine[] = [];
    for (const name of this.names) {
      for (const metric of ['rss', 'heap'] as const) {
        const pick = (sample: MemorySample) =>
          (metric === 'rss' ? sample.readings.get(name)?.rssMb : sample.readings.get(name)?.heapMb) ?? NaN;
        const middleMb = mean(middle.map(pick));
        const lastMb = mean(last.map(pick));
        lines.push({ name, metric, middleMb, lastMb, ratio: lastMb / middleMb });
      }
    }
    return lines;
  }

  /** Highest RSS and heapUsed seen per process. */
  peaks(): Array<{ name: string; rssMb: number; heapMb: number; at: number }> {
    return this.names.map((name) => {
      let rss = 0;
      let heap = 0;
      let at = 0;
      for (const sample of this.samples) {
        const reading = sample.readings.get(name);
        if (!reading) continue;
        if (reading.rssMb > rss) {
          rss = reading.rssMb;
          at = sample.t;
        }
        if (reading.heapMb > heap) heap = reading.heapMb;
      }
      return { name, rssMb: rss, heapMb: heap, at };
    });
  }

  private async heapMb(pid: number): Promise<number> {
    try {
      let port = this.ports.get(pid);
      if (port === undefined) {
        port = listeningPorts(pid)[0];
        if (port === undefined) return NaN;
        this.ports.set(pid, port);
      }
      const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(3_000) });
      const match = /^escalator_process_nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(await response.text());
      return match ? Number(match[1]) / MB : NaN;
    } catch {
      return NaN;
    }
  }
}

function mean(values: number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? NaN : finite.reduce((sum, value) => sum + value, 0) / finite.length;
}

function fmt(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : 'n/a';
}

/**
 * Print the plateau lines and return whether every Escalator process's RSS plateaued (and was
 * measured at all: missing samples fail). heapUsed is printed, not judged: it counts garbage
 * until V8's next full collection, which can be minutes apart at a steady load. A soak whose web
 * heapUsed rose from 36 to 45 MB had the same live heap in snapshots (each forcing a full
 * collection) at 150, 400 and 650 s: 38.1, 38.4, 38.4 MB (bench/README.md, *Load*). A leak of
 * live objects grows RSS too, and RSS is what a container limit counts.
 */
export function plateauVerdict(lines: PlateauLine[], print: (line: string) => void): boolean {
  let ok = lines.length > 0;
  if (!ok) print('  no memory verdict: fewer than three samples in the phase');
  for (const line of lines) {
    const escalator = line.name !== 'bench';
    const judged = escalator && line.metric === 'rss';
    const measured = Number.isFinite(line.ratio);
    const flat = measured && line.ratio <= PLATEAU_RATIO;
    if (judged && !flat) ok = false;
    const verdict = !measured ? 'NOT MEASURED' : flat ? 'plateau' : 'GROWING';
    const note = !escalator
      ? ' (simulator + driver, not Escalator)'
      : judged
        ? ''
        : ' (not judged: counts garbage until the next full collection)';
    print(
      `  ${line.name.padEnd(9)} ${line.metric.padEnd(4)} middle third ${fmt(line.middleMb).padStart(5)} MB   last third ${fmt(line.lastMb).padStart(5)} MB   ratio ${measured ? line.ratio.toFixed(3) : 'n/a'}   ${verdict}${note}`,
    );
  }
  return ok;
}
