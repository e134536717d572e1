import { escalatorMarker, livingBranchBase } from '../../planners/pull-marker.js';
import { enqueueDashboard, enqueueDiff, enqueueLanding } from '../../queue/enqueue.js';
import { handler } from './event.js';

/** A pull request opened or moved: its rendered diff. */
export const pullChanged = handler(
  ['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened'],
  async ({ payload, repo, intake }) => {
    if (!repo) return;
    const pull = payload.pull_request;
    await enqueueDiff(intake.producer, {
      ...repo,
      number: pull.number,
      headSha: pull.head.sha,
      reason: 'pull_request',
    });
  },
);

/** "Re-run" on Escalator's diff check: the diff of each of its pull requests again. */
export const diffRerequested = handler('check_run.rerequested', async ({ id, payload, repo, intake }) => {
  const run = payload.check_run;
  if (!repo || run.name !== 'escalator/diff') return;
  for (const pull of run.pull_requests)
    await enqueueDiff(
      intake.producer,
      { ...repo, number: pull.number, headSha: run.head_sha, reason: 'rerequest' },
      `${run.head_sha}-rerun-${id}`,
    );
});

/**
 * One of Escalator's pull requests (an `escalator/` branch) closed:
 * 1. without a merge: the dashboard lists it no more (a merge re-renders it through the push; the
 *    dashboard job does nothing where it is off)
 * 2. its branch is done with, when it is of this repository: its next run creates it afresh, or
 *    judges what is left of it (living-pull.ts); the living store forgets it
 * 3. merged, with this App's marker: the chain a promotion carries (dev PR → staging PR → this) is
 *    recorded for the next hop, and by merge commit (a later rollback to these versions names the
 *    change that brought them); the provenance store keeps it
 * 4. a pull request Escalator did not write merged into the default branch: the landing job
 *    records the configuration changes it brought (docs/configuration.md, "Promote configuration")
 * 5. one of Escalator's promotions merged with configuration changes: the landing job marks them
 *    done and passes them on
 */
export const pullClosed = handler('pull_request.closed', async ({ id, payload, repo, intake }) => {
  const { pull_request: pull, repository } = payload;
  if (!repo || typeof pull.head.ref !== 'string') return;
  const merge =
    typeof pull.merge_commit_sha === 'string' && /^[0-9a-f]{40}$/.test(pull.merge_commit_sha)
      ? pull.merge_commit_sha
      : undefined;
  const intoDefault = pull.merged && pull.base.ref === repository.default_branch && merge !== undefined;
  if (!pull.head.ref.startsWith('escalator/')) {
    // 4. a person's pull request merged: the configuration it changed waits for the next environments
    if (intoDefault) await enqueueLanding(intake.producer, landingOf(repo, pull, merge, undefined));
    return;
  }
  if (!pull.merged) await enqueueDashboard(intake.producer, repo, id);
  const store = intake.store;
  if (!store) return;
  if (pull.head.repo?.id === repository.id)
    await store.living.forgetClosed(
      { owner: repo.owner, repo: repo.repo },
      livingBranchBase(pull.head.ref),
      pull.head.ref,
      pull.number,
    );
  if (!pull.merged) return;
  const marker = escalatorMarker(pull, repository.full_name, await intake.ownLogin());
  // Not Escalator's after all (a branch named like its own): a person's change, as in 4.
  if (!marker) {
    if (intoDefault) await enqueueLanding(intake.producer, landingOf(repo, pull, merge, undefined));
    return;
  }
  // 5. Escalator's promotion carried configuration changes: done there, and on to the next environment.
  if (intoDefault && marker.kind === 'promote' && marker.config?.length)
    await enqueueLanding(
      intake.producer,
      landingOf(repo, pull, merge, { environment: marker.environment, app: marker.app, config: marker.config }),
    );
  await store.provenance.recordMerge(
    repo,
    marker.environment,
    marker.app,
    [...(marker.sources ?? []), `#${pull.number}`],
    typeof pull.merge_commit_sha === 'string' ? pull.merge_commit_sha : undefined,
  );
});

/** The landing job of a merged pull request (title and author are repository text, clipped). */
function landingOf(
  repo: { installationId: number; owner: string; repo: string },
  pull: { number: number; title: string; user: { login: string } | null },
  mergeSha: string,
  escalator: { environment: string; app: string; config: string[] } | undefined,
) {
  return {
    ...repo,
    number: pull.number,
    title: [...pull.title].slice(0, 200).join(''),
    author: (pull.user?.login ?? 'ghost').slice(0, 64),
    mergeSha,
    ...(escalator ? { escalator: { ...escalator, config: escalator.config.slice(0, 100) } } : {}),
  };
}
