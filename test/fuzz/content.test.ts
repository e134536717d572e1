import { beforeAll, describe, expect, it } from 'vitest';
import { hostileCases, runHostileCase, type CallResult, type HostileCall } from './support/hostile-content.js';

/**
 * Hostile repository content through the pure planners, each call in a child process (2 GB heap)
 * and killed when it overruns the bound: a crash or a hang is a result, not a lost test run.
 *
 * The bound is 10 s a call: a third of ESCALATOR_LOCK_MS's default (30 s), past which another
 * worker takes the job over and the same file is read again. The calls of every case must answer
 * within it, without throwing, with what the case calls for (usually a refusal). Known gaps are
 * `it.fails` on the one call that shows each; `npx tsx bench/fuzz-report.ts --content` prints
 * the time of every call of every case, the slow ones included.
 */
const BOUND_MS = 10_000;

function summary(results: CallResult[]): string[] {
  return results.map((result) => `${result.call}: ${result.outcome} in ${result.ms} ms (${result.detail.slice(0, 160)})`);
}

function expectAnswered(results: CallResult[], expected: Partial<Record<HostileCall, RegExp>> = {}): void {
  const broken = results.filter((result) => result.outcome !== 'answered' || result.ms > BOUND_MS || !(expected[result.call]?.test(result.detail) ?? true));
  expect(broken.length === 0 ? [] : summary(results)).toEqual([]);
}

const refusedAsInvalid = /^refused: the file is not valid YAML/;
const deepProblem = /^problems 1: YAML syntax error: maximum call stack size exceeded/;
const deep = { 'editImages kustomization': refusedAsInvalid, 'listImages kustomization': refusedAsInvalid, 'editImages values': refusedAsInvalid, 'listImages manifest': refusedAsInvalid, parseRepoConfig: deepProblem };

describe('hostile repository content through editImages, listImages and parseRepoConfig', () => {
  it('knows every case it runs', () => {
    expect(hostileCases.map((hostile) => hostile.name)).toEqual(expect.arrayContaining(['deep-flow-sequence', 'deep-block-mapping', 'line-50mb', 'duplicate-keys', 'invalid-utf8', 'alias-fan-out-4000']));
  });

  it.each([
    ['deep-flow-sequence', deep],
    ['deep-flow-mapping', deep],
    ['deep-block-sequence', deep],
    ['deep-block-mapping', deep],
  ])('%s: every call refuses the file within the bound', async (name, expected) => {
    expectAnswered(await runHostileCase(name, BOUND_MS), expected);
  });

  it('line-50mb: a 50 MB file is answered within the bound', async () => {
    expectAnswered(await runHostileCase('line-50mb', BOUND_MS), { 'editImages kustomization': /^edited 1$/, 'listImages kustomization': /^uses 1$/ });
  });

  it('duplicate-keys: refused by the editor and named by the config parser', async () => {
    expectAnswered(await runHostileCase('duplicate-keys', BOUND_MS), {
      'editImages kustomization': /^refused: the file has a duplicate key at line \d+/,
      'listImages kustomization': /^refused: the file has a duplicate key/,
      parseRepoConfig: /^problems 2: duplicate key "newTag"/,
    });
  });

  it('invalid-utf8: bytes read as U+FFFD are answered like any other text', async () => {
    expectAnswered(await runHostileCase('invalid-utf8', BOUND_MS), { 'editImages kustomization': /^edited 1$/, 'listImages kustomization': /^uses 1$/, parseRepoConfig: /unknown key/ });
  });

  it('alias-fan-out-4000: 4,000 aliases to one anchor are answered within the bound; the config refuses them', async () => {
    expectAnswered(await runHostileCase('alias-fan-out-4000', BOUND_MS), { parseRepoConfig: /Excessive alias count/ });
  });

  // Known gaps. Each names the call, what happens, and where the fix belongs. They all overrun
  // the bound, so they run side by side (beforeAll) and the suite waits for the bound once.
  describe('known gaps', () => {
    const gaps: Record<string, [string, HostileCall]> = {
      'deep-flow-2000-bare': ['deep-flow-2000-bare', 'listImages kustomization'],
      'alias-bomb': ['alias-bomb', 'editImages kustomization'],
      'alias-fan-out': ['alias-fan-out', 'listImages kustomization'],
      'scalar-50mb': ['scalar-50mb', 'listImages kustomization'],
      'config-long-names': ['config-long-names', 'parseRepoConfig'],
      'config-long-key': ['config-long-key', 'parseRepoConfig'],
    };
    const running = new Map<string, Promise<CallResult[]>>();
    beforeAll(() => {
      for (const [key, [name, call]] of Object.entries(gaps)) {
        // The bare deep sequence kills the process on its second parse: run a first call before it.
        const calls: HostileCall[] = key === 'deep-flow-2000-bare' ? ['editImages kustomization', call] : [call];
        running.set(key, runHostileCase(name, BOUND_MS, calls));
      }
    });
    const result = async (key: string) => (await running.get(key)) as CallResult[];

    it.fails('deep-flow-2000-bare: a bare 2,000-deep flow sequence, parsed a second time, kills the process (V8 compiles a regexp at the stack limit inside yaml and aborts; src/planners/image-edit/parse.ts could refuse deep nesting before parsing)', async () => {
      expectAnswered(await result('deep-flow-2000-bare'));
    });

    it.fails('alias-bomb: editImages takes 76-94 s on a 1 KB billion-laughs file of 10 levels (9-20 s with 9); listImages takes 10 ms (src/planners/image-edit/)', async () => {
      expectAnswered(await result('alias-bomb'));
    });

    it.fails('alias-fan-out: 100,000 aliases (700 KB) hang every call; resolving each alias walks the document, quadratic (src/planners/image-edit/parse.ts, src/config/repo-config.ts)', async () => {
      expectAnswered(await result('alias-fan-out'));
    });

    it.fails('scalar-50mb: one 50 MB quoted value takes 17 s to list, and editImages runs out of a 2 GB heap; nothing refuses a file by size (src/planners/image-edit/, src/adapters/github/repo.ts loadFile)', async () => {
      expectAnswered(await result('scalar-50mb'));
    });

    it.fails('config-long-names: two 20,000-character environment names exhaust a 2 GB heap in spelling suggestions (editDistance builds the whole matrix; src/config/repo-config.schema.ts)', async () => {
      expectAnswered(await result('config-long-names'));
    });

    it.fails('config-long-key: a 1 MB unknown key and a 1 MB policy take about 18 s of spelling suggestions, and each problem quotes the whole value (src/config/repo-config.ts)', async () => {
      expectAnswered(await result('config-long-key'));
    });
  });
});
