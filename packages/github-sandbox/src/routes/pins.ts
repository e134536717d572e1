import type { SandboxContext } from '../context.js';
import { emitIssues } from '../events.js';
import { nodeId } from '../urls.js';

/**
 * GraphQL `pinIssue` (https://docs.github.com/en/graphql/reference/mutations#pinissue): pins an
 * issue of a repository, at most three per repository as on GitHub, and sends the `issues`
 * webhook with action `pinned`. Pull requests cannot be pinned.
 */
export function pinIssue(
  context: SandboxContext,
  issueNodeId: string,
): { ok: true; id: string } | { ok: false; message: string } {
  for (const repo of context.state.repos.values()) {
    const issues = context.state.issues.get(repo.id) ?? [];
    const issue = issues.find((candidate) => nodeId('Issue', candidate.id) === issueNodeId);
    if (!issue) continue;
    if (!issue.pinned && issues.filter((candidate) => candidate.pinned).length >= 3)
      return { ok: false, message: 'Repository already has 3 pinned issues' };
    if (!issue.pinned) {
      issue.pinned = true;
      emitIssues(context, repo, issue, 'pinned', context.state.requireApp().bot);
    }
    return { ok: true, id: issueNodeId };
  }
  return { ok: false, message: `Could not resolve to a node with the global id of '${issueNodeId}'` };
}
