import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { RollbackRecord } from '../../planners/rollback.js';
import type { JobDeps } from '../shared/deps.js';
import { guardRollbacks, recordVersions, startRollback, type RollbackVersions } from '../shared/rollback-run.js';
import type { PromoteJob } from './job.js';

/** What one run promotes once rollbacks are accounted for. */
export interface RollbackRun {
  /** The versions a rollback goes back to, per app; `null`: an ordinary promotion. */
  versions: RollbackVersions | null;
  /** The rollback this run opens or re-plans. */
  record?: RollbackRecord;
  /** Why Escalator opened it on its own, shown on the pull request. */
  because?: string;
  /** The apps the run promotes. */
  apps: string[];
  /** The run only re-plans an open rollback pull request; it never opens one. */
  keepOnly: boolean;
}

/**
 * A rollback sticks (src/planners/rollback.ts): what it took out is not proposed again on
 * Escalator's own, and an environment that stays degraded after it is halted, not rolled back
 * again. `null`: nothing to propose (said in the log).
 */
export async function resolveRollback(
  deps: JobDeps,
  index: RepoIndex,
  run: { target: string; source: string; apps: string[]; now: number },
  data: PromoteJob,
  log: ProcessorContext['log'],
): Promise<RollbackRun | null> {
  const { target, source, now } = run;
  if (data.reason === 'rollback') {
    const started = await startRollback(deps, index, target, data, run.apps, now, log);
    if ('over' in started) {
      log.info(
        { environment: target, app: data.app, spell: data.spell, reason: started.over },
        'No automatic rollback',
      );
      return null;
    }
    return {
      versions: started.versions,
      ...(started.record ? { record: started.record } : {}),
      ...(started.because !== undefined ? { because: started.because } : {}),
      apps: run.apps,
      keepOnly: false,
    };
  }
  const guarded = await guardRollbacks(deps, index, target, source, data, run.apps, log);
  if (guarded.replan) {
    // Its rollback pull request stays a rollback whichever job plans it (a hold, a window, a merge).
    const record = guarded.replan;
    return {
      versions: recordVersions(record),
      record,
      ...(record.because !== undefined ? { because: record.because } : {}),
      apps: [record.app],
      keepOnly: true,
    };
  }
  if (guarded.apps.length === 0) {
    log.info({ environment: target, app: data.app, reasons: guarded.blocked }, 'Nothing proposed');
    return null;
  }
  return {
    versions: null,
    ...(data.because !== undefined ? { because: data.because } : {}),
    apps: guarded.apps,
    keepOnly: false,
  };
}
