import { beforeAll, describe, expect, it } from 'vitest';
import { cruise, cruiseCheckout, type Cruised } from './support/cruise.js';

// The rules of .dependency-cruiser.cjs run on src/ and packages/ (the simulator) as they are, and on
// a copy of them with planted violations: a rule that has never failed is not known to work.
// Every planted file of every test goes into one copy, cruised once; each test reads the violations
// of its own files, and one more test checks that no violation comes from anywhere else.

/** The planted files of each test below, by test; no path is planted twice. */
const planted = {
  kinds: {
    // A pure planner reaching for an adapter.
    'src/planners/planted-io.ts':
      "import { loadFile } from '../adapters/github/repo.js';\nexport const planted = loadFile;\n",
    // Intake reaching into a job instead of the queue.
    'src/intake/planted-job.ts':
      "import { processBumpJob } from '../jobs/bump/process.js';\nexport const planted = processBumpJob;\n",
    // The web role loading a renderer through intake (intake may use repository state only).
    'src/intake/planted-render.ts':
      "import { renderAndDiff } from '../adapters/render/index.js';\nexport const planted = renderAndDiff;\n",
    // A job importing another job.
    'src/jobs/planted-a/index.ts':
      "import { processDiffJob } from '../diff/process.js';\nexport const plantedA = processDiffJob;\n",
    // A cycle inside one folder.
    'src/queue/planted-cycle-a.ts':
      "import { b } from './planted-cycle-b.js';\nexport const a = (): number => b() + 1;\n",
    'src/queue/planted-cycle-b.ts':
      "import { a } from './planted-cycle-a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n",
    // The web role's server importing intake (the cycle this layout removed).
    'src/web/planted-intake.ts': "import { readBody } from '../intake/http.js';\nexport const planted = readBody;\n",
  },
  jobFolders: {
    // A job folder reaching into another job's folder: its contract, its descriptor, its helper.
    'src/jobs/bump/planted-contract.ts':
      "import { promoteKind } from '../promote/job.js';\nexport const planted = promoteKind;\n",
    'src/jobs/image/planted-helper.ts':
      "import { passGatesOfOtherPull } from '../diff/pull-gates.js';\nexport const planted = passGatesOfOtherPull;\n",
    // A job folder reaching for the table (which imports every job).
    'src/jobs/health/planted-table.ts': "import { jobKinds } from '../kinds.js';\nexport const planted = jobKinds;\n",
    // What jobs share reaching into a job.
    'src/jobs/shared/planted-job.ts':
      "import { processHealthJob } from '../health/process.js';\nexport const planted = processHealthJob;\n",
    // A contract (loaded by the web role through src/queue/enqueue.ts) reaching for an adapter.
    'src/jobs/planted/job.ts':
      "import { RepoState } from '../../adapters/store/repo-state.js';\nexport const planted = RepoState;\n",
    // The queue, outside the producer, knowing a kind of job.
    'src/queue/planted-kind.ts': "import { bumpKind } from '../jobs/bump/job.js';\nexport const planted = bumpKind;\n",
  },
  planners: {
    // The editor taking a helper of the diff planner (renders.ts once took dirname from diff/repo-path.ts).
    'src/planners/image-edit/planted-diff.ts':
      "import { shown } from '../diff/shown.js';\nexport const planted = shown;\n",
    // The diff planner taking a helper of the editor (kustomize-reads.ts once took lineAt from image-edit/source.ts).
    'src/planners/diff/planted-editor.ts':
      "import { kindFromPath } from '../image-edit/detect.js';\nexport const planted = kindFromPath;\n",
    // The shared kustomization reader running back up into the editor…
    'src/planners/kustomize/planted-up.ts':
      "import { kindFromPath } from '../image-edit/detect.js';\nexport const planted = kindFromPath;\n",
    // …and the diff planner reaching the editor through it, with no import of the editor of its own.
    'src/planners/diff/planted-through.ts':
      "import { planted } from '../kustomize/planted-up.js';\nexport const plantedThrough = planted;\n",
  },
  packages: {
    // A product module importing the simulated agents (they would compile into dist/).
    'src/intake/planted-sandbox.ts':
      "import { SimulatedAgent } from '@escalator/github-sandbox/agents';\nexport const planted = SimulatedAgent;\n",
    // The simulator reaching back into the product.
    'packages/github-sandbox/src/planted-product.ts':
      "import { agentKey } from '../../../src/intake/agent-routes.js';\nexport const planted = agentKey;\n",
    // The simulator taking a library (only the seeding may use yaml).
    'packages/github-sandbox/src/planted-library.ts': "import { parse } from 'yaml';\nexport const planted = parse;\n",
    // The seeding taking a library other than yaml.
    'packages/github-sandbox/src/agents/seed.ts':
      "import { z } from 'zod';\nimport { parse } from 'yaml';\nexport const planted = [z, parse];\n",
    // A cycle inside the simulator (git.ts ↔ git-parse.ts was one).
    'packages/github-sandbox/src/planted-cycle-a.ts':
      "import { b } from './planted-cycle-b.js';\nexport const a = (): number => b() + 1;\n",
    'packages/github-sandbox/src/planted-cycle-b.ts':
      "import { a } from './planted-cycle-a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n",
  },
} satisfies Record<string, Record<string, string>>;

/** `rule: from → to` for each violation reported. */
function lines(cruised: Cruised): string[] {
  return cruised.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
}

describe('the dependency rules', () => {
  /** dependency-cruiser with the product's rules over src/ and packages/ plus every planted file. */
  let withPlanted: Cruised;
  beforeAll(async () => {
    withPlanted = await cruise(Object.assign({}, ...Object.values(planted)) as Record<string, string>);
  });

  /** The violations of the planted copy that come from `files`. */
  function violations(files: Record<string, string>): string[] {
    return lines({
      ...withPlanted,
      summary: { violations: withPlanted.summary.violations.filter((violation) => violation.from in files) },
    });
  }

  it('hold on src/ and packages/ as they are', async () => {
    expect(lines(await cruiseCheckout())).toEqual([]);
    // It may wait for the other architecture test file's cruise of the same tree.
  }, 120_000);

  it('report, in the copy with every planted file, only violations that come from a planted file', () => {
    const paths = Object.values(planted).flatMap((files) => Object.keys(files));
    expect(new Set(paths).size).toBe(paths.length);
    expect(
      lines({
        ...withPlanted,
        summary: { violations: withPlanted.summary.violations.filter((violation) => !paths.includes(violation.from)) },
      }),
    ).toEqual([]);
  });

  it('fail on a planted violation of each kind', () => {
    const found = violations(planted.kinds);
    expect(found).toEqual(
      expect.arrayContaining([
        'planners-imports: src/planners/planted-io.ts → src/adapters/github/repo.ts',
        'intake-imports: src/intake/planted-job.ts → src/jobs/bump/process.ts',
        'intake-imports: src/intake/planted-render.ts → src/adapters/render/index.ts',
        'jobs-import-no-job: src/jobs/planted-a/index.ts → src/jobs/diff/process.ts',
        'web-imports: src/web/planted-intake.ts → src/intake/http.ts',
      ]),
    );
    // A cycle is reported once, from whichever of its modules is met first.
    expect(found.filter((line) => line.startsWith('no-cycles: src/queue/planted-cycle-'))).toHaveLength(1);
    expect(found).toHaveLength(6);
  });

  it('fail on a planted violation of each rule of the job folders', () => {
    const found = violations(planted.jobFolders);
    expect(found).toEqual(
      expect.arrayContaining([
        'jobs-import-no-job: src/jobs/bump/planted-contract.ts → src/jobs/promote/job.ts',
        'jobs-import-no-job: src/jobs/image/planted-helper.ts → src/jobs/diff/pull-gates.ts',
        'jobs-import-no-job: src/jobs/health/planted-table.ts → src/jobs/kinds.ts',
        'jobs-shared-imports-no-job: src/jobs/shared/planted-job.ts → src/jobs/health/process.ts',
        'job-contract-imports: src/jobs/planted/job.ts → src/adapters/store/repo-state.ts',
        'queue-imports-contracts-in-enqueue-only: src/queue/planted-kind.ts → src/jobs/bump/job.ts',
      ]),
    );
  });

  it('fail when the editor and the diff planner reach each other, or a shared planner module reaches a feature', () => {
    const found = violations(planted.planners);
    expect(found).toEqual(
      expect.arrayContaining([
        'editor-reaches-no-diff: src/planners/image-edit/planted-diff.ts → src/planners/diff/shown.ts',
        'diff-reaches-no-editor: src/planners/diff/planted-editor.ts → src/planners/image-edit/detect.ts',
        'planners-shared-reaches-no-feature: src/planners/kustomize/planted-up.ts → src/planners/image-edit/detect.ts',
        'diff-reaches-no-editor: src/planners/diff/planted-through.ts → src/planners/image-edit/detect.ts',
      ]),
    );
    // Nothing else: the planted modules' other reaches are inside their own folders or neutral.
    expect(
      found.every((line) =>
        /^(editor-reaches-no-diff|diff-reaches-no-editor|planners-shared-reaches-no-feature): /.test(line),
      ),
    ).toBe(true);
  });

  it('cover packages/ too: the simulator and the product stay apart, and the simulator has no cycle', () => {
    const found = violations(planted.packages);
    expect(found).toEqual(
      expect.arrayContaining([
        'product-imports-no-sandbox: src/intake/planted-sandbox.ts → packages/github-sandbox/src/agents/index.ts',
        'sandbox-imports-no-product: packages/github-sandbox/src/planted-product.ts → src/intake/agent-routes.ts',
        // A library resolves where it is installed (the copy links the checkout's node_modules/).
        expect.stringMatching(
          /^sandbox-runs-on-node-alone: packages\/github-sandbox\/src\/planted-library\.ts → .*node_modules\/yaml\//,
        ),
        expect.stringMatching(
          /^sandbox-seed-uses-yaml-alone: packages\/github-sandbox\/src\/agents\/seed\.ts → .*node_modules\/zod\//,
        ),
      ]),
    );
    expect(
      found.filter((line) => line.startsWith('no-cycles: packages/github-sandbox/src/planted-cycle-')),
    ).toHaveLength(1);
    expect(found).toHaveLength(5);
  });
});
