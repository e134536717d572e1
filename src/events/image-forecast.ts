import { acceptsTag, policyFor, type TagPolicy } from '../planners/tag-policy.js';
import { scopeRefusal, type EventScope } from './image-published.js';
import type { NothingReason } from './outcome.js';

/**
 * What will happen to an announced image, said in the intake's answer before the work is done
 * (issue 35 §3: never "202 and then nothing"). Pure: the intake reads the subscription index and
 * passes it in.
 */

/** The part of a repository's index that says what it does with an image (src/adapters/store/subscriptions.ts). */
export interface IndexedRepoView {
  owner: string;
  repo: string;
  config: {
    environments: ReadonlyArray<{ name: string; from?: string | undefined }>;
    images: ReadonlyArray<TagPolicy & { name: string }>;
  } | null;
  files: ReadonlyArray<{ environment: string; app: string; images: readonly string[] }>;
}

/** What one repository of the sender's scope will do with an image. */
export type RepoForecast =
  | { repository: string; takes: Array<{ environment: string; app: string }> }
  | { repository: string; takes: []; reason: NothingReason; detail: string };

/** What will happen to one announced image, said at intake before the work (from the subscription index only). */
export interface ImageForecast {
  /** `bump`: at least one repository takes it; `nothing`: none does (`reason`); `unknown`: the index is being rebuilt. */
  will: 'bump' | 'nothing' | 'unknown';
  reason?: NothingReason | 'index-rebuilding';
  /** One sentence for a person. */
  detail: string;
  /** Repositories of the sender's scope that use the image, each with what it takes or why not. */
  repositories: RepoForecast[];
}

/** The repositories among `using` that `scope` may change: the only ones an answer may name. */
export function withinScope<K extends { owner: string }>(scope: EventScope, using: readonly K[]): K[] {
  return using.filter((key) => scopeRefusal(scope, key.owner) === undefined);
}

/** "acme, example" or "every owner Escalator is installed for". */
function ownersText(scope: EventScope): string {
  return scope.owners === '*' ? 'any owner Escalator is installed for' : scope.owners.join(', ');
}

/**
 * What the image job will do with an image (the same rules as src/jobs/image/process.ts: scope, tag
 * policy, environments that take images from the registry), from the subscription index alone:
 * nothing here asks GitHub or a registry. `repos` are the indexed repositories within the scope
 * that use the image (`withinScope`). A scope whose owners use no such repository hears the same
 * whether or not another owner uses it: an answer names no repository, and hints at none, outside
 * the scope. What the registry check of the job decides is not known yet: the status says it.
 */
export function forecastImage(input: {
  name: string;
  repository: string;
  tag: string;
  scope: EventScope;
  repos: readonly IndexedRepoView[];
  indexBuilt: boolean;
}): ImageForecast {
  const { name, tag, scope } = input;
  if (input.repos.length === 0) {
    if (!input.indexBuilt)
      return {
        will: 'unknown',
        reason: 'index-rebuilding',
        detail:
          'the index of which repositories use which images is being rebuilt from GitHub; the event waits for it, and the status URL gives the outcome',
        repositories: [],
      };
    return {
      will: 'nothing',
      reason: 'no-environment',
      detail: `no environment in a repository of ${ownersText(scope)} uses ${name}, so nothing changes; reference the image in an environment's files (from: registry), or send it with the credential of the owner that uses it`,
      repositories: [],
    };
  }
  const repositories = input.repos.map((repo): RepoForecast => forecastRepo(repo, name, input.repository, tag));
  const taking = repositories.filter((repo) => repo.takes.length > 0);
  if (taking.length > 0)
    return {
      will: 'bump',
      detail: `${taking.map((repo) => `${repo.repository} (${repo.takes.map((t) => `${t.environment}/${t.app}`).join(', ')})`).join('; ')} will get a bump to ${tag}, once the registry confirms the image where the owner configured credentials for it`,
      repositories,
    };
  const reasons = repositories.map((repo) => ('reason' in repo ? repo.reason : 'no-environment'));
  const reason: NothingReason = reasons.includes('tag-policy')
    ? 'tag-policy'
    : reasons.includes('config-invalid')
      ? 'config-invalid'
      : 'no-environment';
  return {
    will: 'nothing',
    reason,
    detail: `nothing changes: ${repositories.map((repo) => `${repo.repository}: ${'detail' in repo ? repo.detail : ''}`).join('; ')}`,
    repositories,
  };
}

function forecastRepo(repo: IndexedRepoView, name: string, repository: string, tag: string): RepoForecast {
  const full = `${repo.owner}/${repo.repo}`;
  if (!repo.config)
    return {
      repository: full,
      takes: [],
      reason: 'config-invalid',
      detail:
        'its .github/escalator.yml is invalid, so Escalator changes nothing there; fix it and push to the default branch',
    };
  const verdict = acceptsTag(policyFor(repo.config.images, repository), tag);
  if (!verdict.ok)
    return {
      repository: full,
      takes: [],
      reason: 'tag-policy',
      detail: `its tag policy for ${name} refuses ${tag}: ${verdict.reason}`,
    };
  const fromRegistry = new Set(
    repo.config.environments.filter((env) => env.from === 'registry').map((env) => env.name),
  );
  const takes = new Map<string, { environment: string; app: string }>();
  for (const file of repo.files)
    if (fromRegistry.has(file.environment) && file.images.includes(name))
      takes.set(`${file.environment}\n${file.app}`, { environment: file.environment, app: file.app });
  if (takes.size > 0) return { repository: full, takes: [...takes.values()] };
  return {
    repository: full,
    takes: [],
    reason: 'no-environment',
    detail: `${name} is used there only in environments that take images by promotion, not from the registry (from: registry)`,
  };
}
