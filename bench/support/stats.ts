/**
 * Small helpers every bench shares: percentiles, formatting, and the machine's load, printed next
 * to each figure because the benches run on a shared 2-core machine.
 */
import { readFileSync } from 'node:fs';

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** p50, p99, max and mean of unsorted samples. */
export function summarize(samples: number[]): {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
} {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    mean,
  };
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(value < 10 ? 2 : 0)} ms`;
}

/** The first three fields of /proc/loadavg: run-queue averages over 1, 5 and 15 minutes. */
export function loadavg(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Print a header line with the date and load, so every figure carries its conditions. */
export function banner(title: string): void {
  console.log(`${title}`);
  console.log(`  ${new Date().toISOString()}  load average ${loadavg()}  node ${process.version}`);
}
