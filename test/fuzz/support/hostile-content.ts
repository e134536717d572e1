/**
 * Hostile repository content for the pure planners: YAML alias bombs, 10,000-level nesting,
 * 50 MB files, duplicate keys, invalid UTF-8, huge flow sequences, and configuration values that
 * are expensive to compare. Built in memory. Each case is run through `editImages`, `listImages`
 * and `parseRepoConfig` in a child process (see hostile-content-child.ts) that serves case after
 * case, so a crash or a hang is measured instead of taking the test runner down.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
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

/** Memory the child process may use; a call that needs more is counted as crashed. */
export const HEAP_LIMIT_MB = 2048;
const childScript = fileURLToPath(new URL('./hostile-content-child.ts', import.meta.url));

/** The call the child's test-only `planted-hang` and `planted-crash` cases break (see the child). */
export const PLANTED_CALL: HostileCall = 'listImages kustomization';
/** The exit code of `planted-crash`. */
export const PLANTED_EXIT = 70;

/** How the child process ended. */
interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** One line the child prints (see hostile-content-child.ts). */
type Message =
  { bytes: number } | { start: HostileCall } | Omit<CallResult, 'case'> | { end: string } | { error: string };

/** What one request to the child came to. */
interface Served {
  /** The calls that answered, in order. */
  answered: Omit<CallResult, 'case'>[];
  /** The call under way when the process died, if one was. */
  current?: HostileCall;
  startedAt: number;
  bytes: number;
  /** Set when the process ended before the case did. */
  exit?: Exit;
  timedOut: boolean;
  error?: string;
}

/** A child process that serves cases one after another until its stdin closes. */
class HostileChild {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly closed: Promise<Exit>;
  exit: Exit | undefined;
  private stderr = '';
  private buffered = '';
  private listener: { message(message: Message): void; close(exit: Exit): void } | undefined;

  constructor() {
    this.proc = spawn(
      process.execPath,
      ['--expose-gc', `--max-old-space-size=${HEAP_LIMIT_MB}`, '--import', 'tsx', childScript],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    // Writing to a child that died fails; its 'close' says how it died.
    this.proc.stdin.on('error', () => undefined);
    this.proc.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
    });
    this.proc.stdout.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      let newline = this.buffered.indexOf('\n');
      while (newline >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        newline = this.buffered.indexOf('\n');
        this.listener?.message(JSON.parse(line) as Message);
      }
    });
    this.closed = new Promise((resolve) => {
      const closed = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.exit) return;
        this.exit = { code, signal, stderr: this.stderr };
        this.listener?.close(this.exit);
        resolve(this.exit);
      };
      this.proc.on('close', closed);
      this.proc.on('error', (error) => {
        this.stderr += `\n${error.message}`;
        closed(null, null);
      });
    });
  }

  /** Send one case; each call bounded by `boundMs` from its start line, the process killed past it. */
  serve(name: string, calls: readonly HostileCall[], boundMs: number): Promise<Served> {
    return new Promise((resolve) => {
      const served: Served = { answered: [], startedAt: 0, bytes: 0, timedOut: false };
      let timer: NodeJS.Timeout | undefined;
      const finish = (exit?: Exit): void => {
        clearTimeout(timer);
        this.listener = undefined;
        resolve({ ...served, exit });
      };
      this.listener = {
        message: (message) => {
          if ('start' in message) {
            served.current = message.start;
            served.startedAt = performance.now();
            clearTimeout(timer);
            timer = setTimeout(() => {
              served.timedOut = true;
              this.proc.kill('SIGKILL');
            }, boundMs);
          } else if ('call' in message) {
            clearTimeout(timer);
            served.current = undefined;
            served.bytes = message.bytes;
            served.answered.push(message);
          } else if ('bytes' in message) {
            served.bytes = message.bytes;
          } else if ('error' in message) {
            served.error = message.error;
          } else {
            finish();
          }
        },
        close: (exit) => finish(exit),
      };
      this.stderr = '';
      this.proc.stdin.write(`${JSON.stringify({ case: name, calls })}\n`);
    });
  }

  /** End the child: close its stdin, and kill it if it has not gone within 5 s. */
  async close(): Promise<void> {
    if (this.exit) return;
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
    await this.closed;
    clearTimeout(timer);
  }
}

/** The child serving cases now, started at the first case and after a kill or a crash. */
let live: HostileChild | undefined;
/** The cases run one at a time through the one child, in the order asked. */
let turn: Promise<unknown> = Promise.resolve();

/**
 * Run every call of one case in the child process, each call bounded by `boundMs`. One child
 * serves case after case (collecting garbage before each); a call that overruns is killed and
 * recorded as `timeout`, a process that dies is recorded as `crashed` with its exit, and either way
 * the remaining calls, and the cases after, run in a fresh process. Call `closeHostileChild()`
 * when done (a test file's `afterAll`) so no process is left behind.
 */
export function runHostileCase(
  name: string,
  boundMs: number,
  calls: readonly HostileCall[] = hostileCalls,
): Promise<CallResult[]> {
  const run = turn.then(() => runInTurn(name, boundMs, calls));
  turn = run.catch(() => undefined);
  return run;
}

async function runInTurn(name: string, boundMs: number, calls: readonly HostileCall[]): Promise<CallResult[]> {
  const results: CallResult[] = [];
  let next = 0;
  while (next < calls.length) {
    const first = next;
    if (live?.exit) live = undefined;
    live ??= new HostileChild();
    const served = await live.serve(name, calls.slice(first), boundMs);
    if (served.error) throw new Error(served.error);
    for (const answered of served.answered) results.push({ case: name, ...answered });
    next = first + served.answered.length;
    const exit = served.exit;
    if (exit === undefined) continue;
    live = undefined;
    if (served.current !== undefined) {
      const ms = Math.round(performance.now() - served.startedAt);
      const fatal = exit.stderr.match(/FATAL ERROR: [^\n]*/)?.[0] ?? exit.stderr.trim().split('\n').slice(-1)[0] ?? '';
      results.push({
        case: name,
        call: served.current,
        outcome: served.timedOut ? 'timeout' : 'crashed',
        detail: served.timedOut
          ? `no answer within ${boundMs} ms; killed`
          : `process died (${exit.signal ?? `exit ${exit.code}`}): ${fatal}`.slice(0, 300),
        ms,
        bytes: served.bytes,
      });
      next += 1;
    } else if (served.answered.length === 0) {
      throw new Error(
        `the child process died (${exit.signal ?? `exit ${exit.code}`}) before the first call of ${name}; its case cannot be built or the child cannot start: ${exit.stderr.slice(-1000)}`,
      );
    }
  }
  return results;
}

/** The process id of the child serving cases now, if one is alive (for the tests of the recovery). */
export function hostileChildPid(): number | undefined {
  return live && !live.exit ? live.proc.pid : undefined;
}

/** Wait for the cases under way, then end the child process; the next case starts a fresh one. */
export async function closeHostileChild(): Promise<void> {
  await turn;
  const child = live;
  live = undefined;
  await child?.close();
}
