import { loadBotLogin } from './repo.js';

type Octokit = Parameters<typeof loadBotLogin>[0];
type RepoId = { owner: string; repo: string };

/** The dashboard issue as Escalator reads it back. */
export interface DashboardIssue {
  number: number;
  nodeId: string;
  body: string;
  state: 'open' | 'closed';
}

/**
 * Escalator's own dashboard issue: the one it remembers (`known`) when it is still its own, else
 * the newest open issue its bot opened whose body starts with `marker` (one paginated list of the
 * bot's open issues; GET /repos/{owner}/{repo}/issues?creator=…). A look-alike opened by anyone
 * else is never taken.
 */
export async function findDashboardIssue(
  octokit: Octokit,
  id: RepoId,
  marker: string,
  known: number | undefined,
): Promise<DashboardIssue | null> {
  const bot = await loadBotLogin(octokit);
  const shape = (issue: { number: number; node_id: string; body?: string | null; state: string }): DashboardIssue => ({
    number: issue.number,
    nodeId: issue.node_id,
    body: issue.body ?? '',
    state: issue.state === 'closed' ? 'closed' : 'open',
  });
  if (known !== undefined) {
    const found = await octokit.rest.issues.get({ ...id, issue_number: known }).catch((error: { status?: number }) => {
      if (error.status === 404 || error.status === 410) return null;
      throw error;
    });
    if (found && found.data.user?.login === bot && (found.data.body ?? '').startsWith(marker)) return shape(found.data);
  }
  for (let page = 1; page <= 10; page++) {
    const { data } = await octokit.rest.issues.listForRepo({
      ...id,
      creator: bot,
      state: 'open',
      per_page: 100,
      page,
    });
    const own = data.find((issue) => !issue.pull_request && (issue.body ?? '').startsWith(marker));
    if (own) return shape(own);
    if (data.length < 100) break;
  }
  return null;
}

/** Open the dashboard issue and pin it (GraphQL `pinIssue`); a refused pin is logged by the caller, not fatal. */
export async function createDashboardIssue(
  octokit: Octokit,
  id: RepoId,
  title: string,
  body: string,
): Promise<{ issue: DashboardIssue; pinned: boolean; pinError?: string }> {
  const { data } = await octokit.rest.issues.create({ ...id, title, body });
  const issue: DashboardIssue = { number: data.number, nodeId: data.node_id, body: data.body ?? body, state: 'open' };
  try {
    // https://docs.github.com/en/graphql/reference/mutations#pinissue
    await octokit.graphql('mutation ($input: PinIssueInput!) { pinIssue(input: $input) { issue { id } } }', {
      input: { issueId: issue.nodeId },
    });
    return { issue, pinned: true };
  } catch (error) {
    return { issue, pinned: false, pinError: (error as Error).message };
  }
}

/** Replace the dashboard issue's body. */
export async function updateDashboardIssue(octokit: Octokit, id: RepoId, number: number, body: string): Promise<void> {
  await octokit.rest.issues.update({ ...id, issue_number: number, body });
}
