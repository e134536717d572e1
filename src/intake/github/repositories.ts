import { enqueueIndex } from '../../queue/enqueue.js';
import { handler } from './event.js';

/**
 * A push to the default branch: the branch now points at `after` (recorded: one of the only
 * commits a report posted on GitHub may be about — the line of merges, never a side branch's
 * commit), and the repository is indexed again (the push may change the config or an
 * environment's files).
 */
export const pushToDefaultBranch = handler('push', async ({ id, payload, repo, intake }) => {
  if (!repo || payload.ref !== `refs/heads/${payload.repository.default_branch}`) return;
  const { after, deleted } = payload;
  if (!deleted && /^[0-9a-f]{40}$/.test(after) && !/^0+$/.test(after))
    await intake.store?.heads.record(repo.owner, repo.repo, after, intake.now().getTime());
  await enqueueIndex(intake.producer, { ...repo, reason: 'push' }, id);
});

/**
 * The repositories an installation event names: `repositories` (installation events) or its
 * `change` list (`installation_repositories` events carry both `repositories_added` and
 * `repositories_removed`, one of them empty).
 */
function repositoriesOf(
  payload: unknown,
  change: 'repositories_added' | 'repositories_removed',
): { installationId: number; owner: string; repo: string }[] {
  const event = payload as {
    installation: { id: number };
    repositories?: Array<{ full_name: string }>;
  } & Partial<Record<typeof change, Array<{ full_name: string }>>>;
  return (event.repositories ?? event[change] ?? []).map((repository) => {
    const [owner, repo] = repository.full_name.split('/') as [string, string];
    return { installationId: event.installation.id, owner, repo };
  });
}

/** The App was installed on repositories (or given new permissions): each is indexed. */
export const repositoriesAdded = handler(
  ['installation.created', 'installation.new_permissions_accepted', 'installation_repositories.added'],
  async ({ id, payload, intake }) => {
    for (const repo of repositoriesOf(payload, 'repositories_added'))
      await enqueueIndex(intake.producer, { ...repo, reason: 'installation' }, id);
  },
);

/** The App was removed from repositories: their subscriptions go (the subscription store drops them). */
export const repositoriesRemoved = handler(
  ['installation.deleted', 'installation_repositories.removed'],
  async ({ payload, intake }) => {
    for (const repo of repositoriesOf(payload, 'repositories_removed'))
      await intake.store?.subscriptions.dropRepo(repo);
  },
);
