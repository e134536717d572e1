import { afterAll, describe, expect, it } from 'vitest';
import {
  closeHostileChild,
  hostileCalls,
  hostileCases,
  runHostileCase,
  type CallResult,
  type HostileCall,
} from './support/hostile-content.js';

/**
 * Hostile repository content through the pure planners, each call in a child process (2 GB heap;
 * one process serves case after case, collecting garbage before each) and killed when it overruns
 * the bound: a crash or a hang is a result, not a lost test run, and the next call gets a fresh
 * process (test/fuzz/hostile-child.test.ts proves it).
 *
 * The bound is 10 s a call: a third of ESCALATOR_LOCK_MS's default (30 s), past which another
 * worker takes the job over and the same file is read again. Every call of every case must answer
 * within it, without throwing, with what the case calls for: the limits of
 * src/planners/yaml-guard.ts refuse a file too large, nested too deep, with too many lines, anchors
 * or aliases, or whose aliases expand too far, each with a reason that says what to do.
 * `npx tsx bench/fuzz-report.ts --content` prints the time of every call of every case.
 */
const BOUND_MS = 10_000;

type Expected = Partial<Record<HostileCall, RegExp>>;

/** The same refusal from the four editor calls, and another from the configuration parser. */
function refusedBy(editor: RegExp, config: RegExp): Expected {
  return {
    'editImages kustomization': editor,
    'listImages kustomization': editor,
    'editImages values': editor,
    'listImages manifest': editor,
    parseRepoConfig: config,
  };
}

const tooLarge = refusedBy(
  /^refused: the file is [\d.]+ MB, over the limit of 8\.0 MB for one YAML file; split it/,
  /^problems 1: the file is [\d.]+ MB, over the limit of 256\.0 KB/,
);
const flowTooDeep = refusedBy(
  /^refused: the file nests flow collections \(\[ or \{\) more than 100 levels deep at line \d+/,
  /^problems 1: the file nests flow collections \(\[ or \{\) more than 32 levels deep/,
);

/** What each case must be answered with; a case missing here fails the first test. */
const expectations: Record<string, Expected> = {
  'alias-bomb': refusedBy(
    /^refused: the file's aliases expand to more than 100,000 values/,
    /^problems 1: the file's aliases expand to more than 100,000 values/,
  ),
  'alias-fan-out': refusedBy(
    /^refused: the file has more than 1000 aliases \(\*name, here at line 1014\); write the values out/,
    /^problems 1: the file is 683\.9 KB, over the limit of 256\.0 KB/,
  ),
  'deep-flow-2000-bare': flowTooDeep,
  'alias-fan-out-4000': refusedBy(
    /^refused: the file has more than 1000 aliases/,
    /^problems 1: the file has more than 100 aliases/,
  ),
  'deep-flow-sequence': flowTooDeep,
  'deep-flow-mapping': flowTooDeep,
  'deep-block-sequence': refusedBy(
    /^refused: line 9 opens 10000 nested sequences, deeper than the limit of 100/,
    /^problems 1: line 9 opens 10000 nested sequences, deeper than the limit of 32/,
  ),
  'deep-block-mapping': tooLarge,
  // 200 levels of one-space indentation are within the editor's limit (2 columns a level) and past the configuration's.
  'deep-block-mapping-200': {
    'editImages kustomization': /^edited 1$/,
    'listImages kustomization': /^uses 1$/,
    parseRepoConfig: /^problems 1: line 73 is indented 65 columns, deeper than the limit of 32/,
  },
  'scalar-50mb': tooLarge,
  'line-50mb': tooLarge,
  'comments-50mb': tooLarge,
  'mapping-50mb': tooLarge,
  'documents-50mb': tooLarge,
  // Under the size limit, a large stream is read document by document: the edit still happens.
  'documents-3mb': {
    'editImages values': /^edited 1$/,
    'listImages manifest': /^uses 1$/,
    parseRepoConfig: /^problems 1: the file is 3\.0 MB, over the limit of 256\.0 KB/,
  },
  'images-200k': tooLarge,
  'flow-sequence-1m': {
    ...refusedBy(
      /^refused: the file has 1,000,007 lines and list items to read at once, over the limit of 300,000/,
      /./,
    ),
    parseRepoConfig: /^problems 1: the file is 2\.9 MB, over the limit of 256\.0 KB/,
  },
  'duplicate-keys': {
    'editImages kustomization': /^refused: the file has a duplicate key at line \d+/,
    'listImages kustomization': /^refused: the file has a duplicate key/,
    parseRepoConfig: /^problems 2: duplicate key "newTag"/,
  },
  'invalid-utf8': {
    // The tag reads as `1.0.0\uFFFD`, which is no tag: refused with its reason, never overwritten.
    'editImages kustomization': /^refused: images\[0\]\.newTag holds "1\.0\.0\uFFFD", which is not a valid tag/,
    'listImages kustomization': /^refused: ghcr\.io\/example\/hello's version cannot be read from the file/,
    parseRepoConfig: /unknown key/,
  },
  'config-long-names': { parseRepoConfig: /^problems \d+: .*\(20,000 characters\)/ },
  'config-long-key-200k': { 'editImages kustomization': /^edited 1$/, parseRepoConfig: /^problems \d+: / },
  'config-long-key': {
    'editImages kustomization': /^edited 1$/,
    parseRepoConfig: /^problems 1: the file is 2\.0 MB, over the limit of 256\.0 KB/,
  },
};

function summary(results: CallResult[]): string[] {
  return results.map(
    (result) => `${result.call}: ${result.outcome} in ${result.ms} ms (${result.detail.slice(0, 200)})`,
  );
}

describe('hostile repository content through editImages, listImages and parseRepoConfig', () => {
  afterAll(closeHostileChild);

  it('has an expectation for every case, and every case has its calls', () => {
    expect(Object.keys(expectations).sort()).toEqual(hostileCases.map((hostile) => hostile.name).sort());
    expect(hostileCalls).toHaveLength(5);
  });

  describe.each(hostileCases.map((hostile) => [hostile.name, hostile.what]))('%s (%s)', (name) => {
    it('every call answers within the bound, without throwing, as expected', async () => {
      const results = await runHostileCase(name, BOUND_MS);
      const expected = expectations[name] ?? {};
      const broken = results.filter(
        (result) =>
          result.outcome !== 'answered' ||
          result.ms > BOUND_MS ||
          !(expected[result.call]?.test(result.detail) ?? true),
      );
      expect(results.map((result) => result.call)).toEqual([...hostileCalls]);
      expect(broken.length === 0 ? [] : summary(results)).toEqual([]);
    });
  });
});
