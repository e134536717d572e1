import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { planFreezeGate } from '../../planners/freeze.js';
import { planWindowGate } from '../../planners/windows.js';
import type { JobDeps } from '../shared/deps.js';
import { controlInputs } from '../shared/promotion-inputs.js';

type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/**
 * Why auto-merge into `environment` must wait now (a freeze in force, a closed window), or
 * undefined. For bump pull requests, which have no gate checks of their own: the promotion job
 * decides the same through `planGates`.
 */
export async function autoMergeHeldBy(
  deps: JobDeps,
  index: RepoIndex,
  environment: Environment,
): Promise<string | undefined> {
  const now = deps.now().getTime();
  const controls = controlInputs(environment, await deps.store.freezes.loadFreezes(index, now));
  const gates = [
    ...planFreezeGate({ target: environment.name, freezes: controls.freezes, rollback: false, now }),
    ...planWindowGate({ target: environment.name, windows: controls.windows, rollback: false, now }).gates,
  ].filter((gate) => gate.state !== 'passed');
  return gates.length > 0 ? gates.map((gate) => gate.detail).join('; ') : undefined;
}
