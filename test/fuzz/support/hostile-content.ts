/**
 * Hostile repository content for the pure planners: YAML alias bombs, 10,000-level nesting,
 * 50 MB files, duplicate keys, invalid UTF-8, huge flow sequences, and configuration values that
 * are expensive to compare. Built in memory. Each case is run through `editImages`, `listImages`
 * and `parseRepoConfig` in a child process (see hostile-content-child.ts), so a crash or a hang
 * is measured instead of taking the test runner down.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { editImages, listImages } from '../../../src/planners/image-edit/index.js';
import { parseRepoConfig } from '../../../src/config/repo-config.js';

export const IMAGE = 'ghcr.io/example/hello';
const MB = 1024 * 1024;

const kustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- deployment.yaml
images:
- name: ${IMAGE}
  newTag: 1.0.0
`;
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
      - name: hello
        image: ${IMAGE}:1.0.0
`;
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
`;

/** A string of about `bytes` bytes made of `unit` repeated. */
function fill(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length));
}

export interface HostileCase {
  name: string;
  /** What the case attacks, for the report. */
  what: string;
  build(): string;
}

export const hostileCases: HostileCase[] = [
  {
    name: 'alias-bomb',
    what: 'billion laughs: 10 anchors, each a list of 9 aliases to the previous one (9^10 nodes if expanded)',
    build: () => {
      const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (const [prev, next] of [
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'd'],
        ['d', 'e'],
        ['e', 'f'],
        ['f', 'g'],
        ['g', 'h'],
        ['h', 'i'],
        ['i', 'j'],
      ])
        lines.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
      return `${kustomization}${config}image: ${IMAGE}:1.0.0\n${lines.join('\n')}\n`;
    },
  },
  {
    name: 'alias-fan-out',
    what: '100,000 aliases to one anchor (700 KB)',
    build: () => `${kustomization}${config}image: &img ${IMAGE}:1.0.0\nmany:\n${fill('- *img\n', 100_000 * 7)}`,
  },
  {
    name: 'deep-flow-2000-bare',
    what: 'a file that is 2,000 nested flow sequences [[[…]]] and a comment naming the image',
    build: () => `${'['.repeat(2_000)}${']'.repeat(2_000)}\n# ${IMAGE}\n`,
  },
  {
    name: 'alias-fan-out-4000',
    what: '4,000 aliases to one anchor (28 KB)',
    build: () => `${kustomization}${config}image: &img ${IMAGE}:1.0.0\nmany:\n${'- *img\n'.repeat(4_000)}`,
  },
  {
    name: 'deep-flow-sequence',
    what: '10,000 nested flow sequences [[[…]]]',
    build: () => `${kustomization}extra: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
  },
  {
    name: 'deep-flow-mapping',
    what: '10,000 nested flow mappings {a: {a: …}}',
    build: () => `${kustomization}extra: ${'{a: '.repeat(10_000)}1${'}'.repeat(10_000)}\n`,
  },
  {
    name: 'deep-block-sequence',
    what: '10,000 nested block sequences on one line (- - - … x)',
    build: () => `${kustomization}extra:\n  ${'- '.repeat(10_000)}x\n`,
  },
  {
    name: 'deep-block-mapping',
    what: '10,000 nested block mappings, each indented one more space (50 MB of indentation)',
    build: () =>
      `${kustomization}extra:\n${Array.from({ length: 10_000 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')} x\n`,
  },
  {
    name: 'deep-block-mapping-200',
    what: '200 nested block mappings, each indented one more space (20 KB)',
    build: () =>
      `${kustomization}extra:\n${Array.from({ length: 200 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')} x\n`,
  },
  {
    name: 'scalar-50mb',
    what: 'one 50 MB double-quoted value',
    build: () => `${kustomization}notes: "${fill('x', 50 * MB)}"\n`,
  },
  {
    name: 'line-50mb',
    what: 'one 50 MB plain scalar without a newline',
    build: () => `${kustomization}notes: ${fill('x', 50 * MB)}`,
  },
  {
    name: 'comments-50mb',
    what: '50 MB of comment lines',
    build: () => `${kustomization}${fill('# a comment line\n', 50 * MB)}`,
  },
  {
    name: 'mapping-50mb',
    what: '50 MB of keys in one mapping (about 3.5 million)',
    build: () =>
      `${kustomization}${Array.from({ length: Math.ceil((50 * MB) / 15) }, (_, i) => `k${i.toString(36).padStart(8, '0')}: v1\n`).join('')}`,
  },
  {
    name: 'documents-50mb',
    what: '50 MB of small manifests, the image in the last one',
    build: () =>
      `${fill('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n---\n', 50 * MB)}${deployment}`,
  },
  {
    name: 'documents-3mb',
    what: '3 MB of small manifests (under the size limit), the image in the last one',
    build: () =>
      `${fill('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n---\n', 3 * MB)}${deployment}`,
  },
  {
    name: 'images-200k',
    what: 'a kustomization with 200,000 images entries (10 MB)',
    build: () =>
      `${kustomization}${Array.from({ length: 200_000 }, (_, i) => `- name: ghcr.io/example/app${i}\n  newTag: 1.0.${i}\n`).join('')}`,
  },
  {
    name: 'flow-sequence-1m',
    what: 'a flow sequence of 1,000,000 items',
    build: () => `${kustomization}extra: [${Array(1_000_000).fill('1').join(', ')}]\n`,
  },
  {
    name: 'duplicate-keys',
    what: 'the image entry with newTag twice, environments twice',
    build: () => `${kustomization}  newTag: 6.6.6\n${config}environments: []\n`,
  },
  {
    name: 'invalid-utf8',
    what: 'bytes 0xFF 0xFE 0xC3 in a comment, a key and the tag (read as U+FFFD)',
    build: () =>
      Buffer.concat([
        Buffer.from(`${kustomization.replace('newTag: 1.0.0', 'newTag: 1.0.0\xff')}# \xfe\xff comment\n`, 'latin1'),
        Buffer.from([0x6b, 0xc3, 0x3a, 0x20, 0x76, 0x0a]),
        Buffer.from(config),
      ]).toString('utf8'),
  },
  {
    name: 'config-long-names',
    what: 'two environments with 20,000-character names and a from that names neither (spelling suggestions)',
    build: () =>
      `environments:\n  - name: ${fill('a', 20_000)}\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: ${fill('b', 20_000)}\n    paths: ["apps/*/overlays/prod"]\n    from: ${fill('c', 20_000)}\n`,
  },
  {
    name: 'config-long-key-200k',
    what: 'an unknown 200 KB key and a 50 KB policy value, under the size limit of a configuration (spelling suggestions)',
    build: () =>
      `environments:\n  - name: dev\n    paths: ["a"]\n    from: registry\nimages:\n  - name: ${IMAGE}\n    policy: ${fill('s', 50 * 1024)}\n? ${fill('k', 200 * 1024)}\n: 1\n`,
  },
  {
    name: 'config-long-key',
    what: 'an unknown 1 MB key (explicit, so YAML takes it) and a 1 MB policy value (spelling suggestions)',
    build: () =>
      `environments:\n  - name: dev\n    paths: ["a"]\n    from: registry\nimages:\n  - name: ${IMAGE}\n    policy: ${fill('s', MB)}\n? ${fill('k', MB)}\n: 1\n`,
  },
];

/** The calls each case goes through, in order. */
export const hostileCalls = [
  'editImages kustomization',
  'listImages kustomization',
  'editImages values',
  'listImages manifest',
  'parseRepoConfig',
] as const;
export type HostileCall = (typeof hostileCalls)[number];

export interface CallResult {
  case: string;
  call: HostileCall;
  /** `answered`: returned normally; the others are what the bound or the process saw. */
  outcome: 'answered' | 'threw' | 'crashed' | 'timeout' | 'not-run';
  /** A short summary: `refused: …`, `edited 1`, `uses 3`, `problems 2: …`, the error, or the exit. */
  detail: string;
  ms: number;
  bytes: number;
}

const path = {
  kustomization: 'apps/hello/overlays/dev/kustomization.yaml',
  values: 'apps/hello/values.yaml',
  manifest: 'apps/hello/overlays/dev/deployment.yaml',
};

/** Run one call on `text` and summarize what it answered. */
export function runCall(call: HostileCall, text: string): { outcome: 'answered' | 'threw'; detail: string } {
  try {
    switch (call) {
      case 'editImages kustomization':
      case 'editImages values': {
        const result = editImages(
          text,
          { repository: IMAGE, tag: '2.0.0' },
          { path: call.endsWith('values') ? path.values : path.kustomization },
        );
        const detail =
          result.refused.length > 0
            ? `refused: ${result.refused[0]?.reason}`
            : result.changed.length > 0
              ? `edited ${result.changed.length}`
              : result.mentions
                ? 'unchanged'
                : 'no mention';
        return { outcome: 'answered', detail };
      }
      case 'listImages kustomization':
      case 'listImages manifest': {
        const result = listImages(text, { path: call.endsWith('manifest') ? path.manifest : path.kustomization });
        return {
          outcome: 'answered',
          detail: result.refused.length > 0 ? `refused: ${result.refused[0]?.reason}` : `uses ${result.uses.length}`,
        };
      }
      case 'parseRepoConfig': {
        const result = parseRepoConfig(text);
        return {
          outcome: 'answered',
          detail: result.ok ? 'ok' : `problems ${result.problems.length}: ${result.problems[0]?.message}`,
        };
      }
    }
  } catch (error) {
    return { outcome: 'threw', detail: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** Memory each child process may use; a call that needs more is counted as crashed. */
export const HEAP_LIMIT_MB = 2048;
const child = fileURLToPath(new URL('./hostile-content-child.ts', import.meta.url));

/**
 * Run every call of one case in child processes, each call bounded by `boundMs`. A call that
 * overruns is killed and recorded as `timeout`; a process that dies is recorded as `crashed`
 * with its exit; either way the remaining calls run in a fresh process.
 */
export async function runHostileCase(
  name: string,
  boundMs: number,
  calls: readonly HostileCall[] = hostileCalls,
): Promise<CallResult[]> {
  const results: CallResult[] = [];
  let next = 0;
  while (next < calls.length) {
    const first = next;
    const lines: string[] = [];
    let current: HostileCall | undefined;
    let startedAt = 0;
    let bytes = 0;
    const exit = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      timedOut: boolean;
      stderr: string;
    }>((resolve) => {
      const proc = spawn(
        process.execPath,
        [`--max-old-space-size=${HEAP_LIMIT_MB}`, '--import', 'tsx', child, name, calls.slice(first).join(',')],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      let buffered = '';
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          timedOut = true;
          proc.kill('SIGKILL');
        }, boundMs);
      };
      proc.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-4000);
      });
      proc.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf('\n');
          const parsed = JSON.parse(line) as { start?: HostileCall } & Partial<CallResult>;
          if (parsed.call === undefined && parsed.start === undefined) {
            bytes = parsed.bytes ?? bytes;
          } else if (parsed.start) {
            current = parsed.start;
            startedAt = performance.now();
            arm();
          } else {
            clearTimeout(timer);
            current = undefined;
            bytes = parsed.bytes ?? bytes;
            lines.push(line);
          }
        }
      });
      proc.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, timedOut, stderr });
      });
    });
    for (const line of lines) {
      const parsed = JSON.parse(line) as Omit<CallResult, 'case'>;
      results.push({ case: name, ...parsed });
    }
    next = first + lines.length;
    if (current !== undefined) {
      const ms = Math.round(performance.now() - startedAt);
      const fatal = exit.stderr.match(/FATAL ERROR: [^\n]*/)?.[0] ?? exit.stderr.trim().split('\n').slice(-1)[0] ?? '';
      results.push({
        case: name,
        call: current,
        outcome: exit.timedOut ? 'timeout' : 'crashed',
        detail: exit.timedOut
          ? `no answer within ${boundMs} ms; killed`
          : `process died (${exit.signal ?? `exit ${exit.code}`}): ${fatal}`.slice(0, 300),
        ms,
        bytes,
      });
      next += 1;
    } else if (lines.length === 0) {
      throw new Error(`the child for ${name} ended without running a call: ${exit.stderr.slice(-1000)}`);
    }
  }
  return results;
}
