import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that boot the whole product (the sandbox launch, end-to-end, Cluster and
 * product-level security tests) spend most of their time waiting on jobs and webhooks, and the
 * longest of them take a minute or more: started last, one of them alone sets the end of the run.
 * They start first, in Vitest's own order (longest first once it has timed a run); the rest fill in.
 */
export const productFolders = [
  'test/newcomer/',
  'test/e2e/',
  'test/cluster/',
  'test/sandbox/',
  'test/security/',
  'test/intake/',
];
const first = productFolders;

export class WaitingFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = first.findIndex((folder) => file.moduleId.includes(`/${folder}`));
      return at === -1 ? first.length : 0;
    };
    // Array.prototype.sort is stable: within each rank, Vitest's order stands.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
