import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The rules of .dependency-cruiser.cjs run on a copy of src/ and packages/ (the simulator) with one
// planted violation each: a rule that has never failed is not known to work.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'escalator-dependency-rules-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let copies = 0;

/** Run dependency-cruiser with the product's rules over src/ and packages/ plus `planted` files; the rule names it reports. */
function violations(planted: Record<string, string>): string[] {
  const dir = join(scratch, `copy-${copies++}`);
  cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(root, 'packages'), join(dir, 'packages'), {
    recursive: true,
    filter: (source) => !source.split(/[\\/]/).includes('node_modules'),
  });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'])
    cpSync(join(root, file), join(dir, file));
  // The libraries resolve as they do in the checkout, and the workspace link npm makes points at the
  // copy's packages/, so `@escalator/github-sandbox` is the copy's simulator.
  mkdirSync(join(dir, 'node_modules/@escalator'), { recursive: true });
  for (const entry of readdirSync(join(root, 'node_modules')))
    if (entry !== '@escalator') symlinkSync(join(root, 'node_modules', entry), join(dir, 'node_modules', entry));
  symlinkSync('../../packages/github-sandbox', join(dir, 'node_modules/@escalator/github-sandbox'), 'dir');
  for (const [path, text] of Object.entries(planted)) writeFileSync(join(dir, path), text);
  let output: string;
  try {
    output = execFileSync(
      join(root, 'node_modules/.bin/depcruise'),
      ['src', 'packages', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_PATH: join(root, 'node_modules') } },
    ).toString('utf8');
  } catch (error) {
    output = (error as { stdout: Buffer }).stdout.toString('utf8');
  }
  const result = JSON.parse(output) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
}

describe('the dependency rules', () => {
  it('hold on src/ and packages/ as they are', () => {
    expect(violations({})).toEqual([]);
  }, 60_000);

  it('fail on a planted violation of each kind', () => {
    const found = violations({
      // A pure planner reaching for an adapter.
      'src/planners/planted-io.ts':
        "import { loadFile } from '../adapters/github/repo.js';\nexport const planted = loadFile;\n",
      // Intake reaching into a job instead of the queue.
      'src/intake/planted-job.ts':
        "import { processBumpJob } from '../jobs/bump.js';\nexport const planted = processBumpJob;\n",
      // The web role loading a renderer through intake (intake may use repository state only).
      'src/intake/planted-render.ts':
        "import { renderAndDiff } from '../adapters/render/index.js';\nexport const planted = renderAndDiff;\n",
      // A job importing another job.
      'src/jobs/planted-a.ts': "import { processDiffJob } from './diff.js';\nexport const plantedA = processDiffJob;\n",
      // A cycle inside one folder.
      'src/queue/planted-cycle-a.ts':
        "import { b } from './planted-cycle-b.js';\nexport const a = (): number => b() + 1;\n",
      'src/queue/planted-cycle-b.ts':
        "import { a } from './planted-cycle-a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n",
      // The web role's server importing intake (the cycle this layout removed).
      'src/web/planted-intake.ts': "import { readBody } from '../intake/http.js';\nexport const planted = readBody;\n",
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'planners-imports: src/planners/planted-io.ts → src/adapters/github/repo.ts',
        'intake-imports: src/intake/planted-job.ts → src/jobs/bump.ts',
        'intake-imports: src/intake/planted-render.ts → src/adapters/render/index.ts',
        'jobs-import-no-job: src/jobs/planted-a.ts → src/jobs/diff.ts',
        'web-imports: src/web/planted-intake.ts → src/intake/http.ts',
      ]),
    );
    // A cycle is reported once, from whichever of its modules is met first.
    expect(found.filter((line) => line.startsWith('no-cycles: src/queue/planted-cycle-'))).toHaveLength(1);
    expect(found).toHaveLength(6);
  }, 60_000);

  it('cover packages/ too: the simulator and the product stay apart, and the simulator has no cycle', () => {
    const found = violations({
      // A product module importing the simulated agents (they would compile into dist/).
      'src/intake/planted-sandbox.ts':
        "import { SimulatedAgent } from '@escalator/github-sandbox/agents';\nexport const planted = SimulatedAgent;\n",
      // The simulator reaching back into the product.
      'packages/github-sandbox/src/planted-product.ts':
        "import { agentKey } from '../../../src/intake/agent-routes.js';\nexport const planted = agentKey;\n",
      // The simulator taking a library (only the seeding may use yaml).
      'packages/github-sandbox/src/planted-library.ts':
        "import { parse } from 'yaml';\nexport const planted = parse;\n",
      // The seeding taking a library other than yaml.
      'packages/github-sandbox/src/agents/seed.ts':
        "import { z } from 'zod';\nimport { parse } from 'yaml';\nexport const planted = [z, parse];\n",
      // A cycle inside the simulator (git.ts ↔ git-parse.ts was one).
      'packages/github-sandbox/src/planted-cycle-a.ts':
        "import { b } from './planted-cycle-b.js';\nexport const a = (): number => b() + 1;\n",
      'packages/github-sandbox/src/planted-cycle-b.ts':
        "import { a } from './planted-cycle-a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n",
    });
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
  }, 60_000);
});
