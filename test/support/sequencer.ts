import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order files start in. The files that boot the whole product (the sandbox launch, end-to-end,
 * Cluster and product-level security tests) spend most of their time waiting on jobs and
 * webhooks, and the longest of them take a minute or more: started last, one of them alone sets
 * the end of the run (or of its group: vitest.config.ts runs e2e, then unit and integration).
 * They start first; within them, and among the rest, the files known to be long start first
 * (a clean CI checkout has no timings of a run before, and Vitest then orders by file size),
 * then Vitest's own order (longest first once it has timed a run).
 */
const first = ['test/newcomer/', 'test/e2e/', 'test/cluster/', 'test/sandbox/', 'test/security/', 'test/intake/'];

/** The longest files of the last CI runs, longest first (issue 37). */
export const longest = [
  'test/newcomer/sandbox.test.ts',
  'test/fuzz/http.test.ts',
  'test/e2e/rollback-sticks.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/controls.test.ts',
  'test/fuzz/content.test.ts',
  'test/golden-kustomize.test.ts',
  'test/e2e/dashboard.test.ts',
  'test/cluster/',
  'test/newcomer/sandbox-stop.test.ts',
];

export class WaitingFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const waiting = first.some((folder) => file.moduleId.includes(`/${folder}`)) ? 0 : 1;
      const long = longest.findIndex((path) => file.moduleId.includes(`/${path}`));
      return waiting * (longest.length + 1) + (long === -1 ? longest.length : long);
    };
    // Array.prototype.sort is stable: within each rank, Vitest's order stands.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
