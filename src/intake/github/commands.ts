import { actionCommand, DASHBOARD_MARKER, tickedActions } from '../../planners/dashboard.js';
import {
  COMMAND_MEMORY_SECONDS,
  enqueueCommand,
  enqueueDashboard,
  enqueueDashboardCommand,
} from '../../queue/enqueue.js';
import { handler } from './event.js';

/**
 * `author_association` values of people with a standing in the repository: a writer is always one
 * of them (an organization member, an outside collaborator or the owner); `CONTRIBUTOR`,
 * `FIRST_TIMER`, `FIRST_TIME_CONTRIBUTOR`, `MANNEQUIN` and `NONE` are not (the `author-association`
 * enum of GitHub's REST OpenAPI description, github/rest-api-description).
 */
const collaborators = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

/** A `/escalator …` comment by a person: one command job (the job checks the author's permission and answers). */
export const commandComment = handler('issue_comment.created', async ({ payload, repo, log, intake }) => {
  const { comment, issue } = payload;
  if (!repo || comment.user?.type === 'Bot' || !/^\s*\/escalator(\s|$)/m.test(comment.body)) return;
  const age = intake.now().getTime() - Date.parse(comment.created_at);
  if (!(age <= COMMAND_MEMORY_SECONDS * 1000)) {
    log.warn(
      { commentId: comment.id, createdAt: comment.created_at },
      'Command not run: the comment is older than the commands Escalator remembers (a replayed delivery?)',
    );
    return;
  }
  await enqueueCommand(
    intake.producer,
    {
      ...repo,
      issueNumber: issue.number,
      isPull: Boolean(issue.pull_request),
      author: comment.user?.login ?? 'ghost',
      body: comment.body.slice(0, 65_536),
      ...(issue.pull_request && issue.body ? { prBody: issue.body.slice(0, 262_144) } : {}),
    },
    comment.id,
    // Anyone who can comment can queue a command: those of people without a standing in the
    // repository wait behind everyone else's (the job still asks GitHub for the permission).
    { stranger: !collaborators.has(comment.author_association) },
  );
});

/**
 * A person ticked a box on the dashboard issue: each box runs as the command it stands for (the
 * command job checks the sender's permission through the API and answers on the issue), then the
 * dashboard is rendered again, which unticks it.
 */
export const dashboardTicked = handler('issues.edited', async ({ id, payload, repo, log, intake }) => {
  const { issue, changes, sender } = payload;
  const before = (changes as typeof changes | undefined)?.body?.from;
  if (!repo || sender.type === 'Bot' || before === undefined || !issue.body?.startsWith(DASHBOARD_MARKER)) return;
  if (issue.user?.login !== (await intake.ownLogin())) return;
  const actions = tickedActions(before, issue.body);
  if (actions.length === 0) return;
  for (const action of actions)
    await enqueueDashboardCommand(
      intake.producer,
      { ...repo, issueNumber: issue.number, isPull: false, author: sender.login, body: actionCommand(action) },
      issue.updated_at,
    );
  await enqueueDashboard(intake.producer, { ...repo, force: true }, id);
  log.info({ issue: issue.number, actions: actions.length }, 'Dashboard boxes ticked; running them as commands');
});
