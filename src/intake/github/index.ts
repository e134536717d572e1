import { commandComment, dashboardTicked } from './commands.js';
import type { GitHubHandler } from './event.js';
import { checkRun, commitStatus, deploymentStatus } from './health.js';
import { packagePublished } from './packages.js';
import { diffRerequested, pullChanged, pullClosed } from './pulls.js';
import { pushToDefaultBranch, repositoriesAdded, repositoriesRemoved } from './repositories.js';

export { handler, intakeEvent, type GitHubHandler, type GitHubIntake, type IntakeEvent } from './event.js';

/**
 * Every GitHub event Escalator answers, one small handler each: normalize, enqueue, answer. What
 * a handler changes in Redis it changes through one store call (the repository-state adapters);
 * the rest is the jobs'. `createGitHubApp` registers the table with Probot; app.yml subscribes to
 * the events it names.
 */
export const githubHandlers: readonly GitHubHandler[] = [
  pushToDefaultBranch,
  repositoriesAdded,
  repositoriesRemoved,
  pullChanged,
  diffRerequested,
  pullClosed,
  commandComment,
  dashboardTicked,
  commitStatus,
  checkRun,
  deploymentStatus,
  packagePublished,
];
