import type { SandboxContext } from './context.js';
import { emitIssueComment } from './events.js';
import type { SandboxComment, SandboxPull, SandboxRepo, SandboxUser } from './model.js';

/** Adds a comment to a pull request's conversation and sends `issue_comment` created. */
export function createComment(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  author: SandboxUser,
  body: string,
  viaApp: boolean,
): SandboxComment {
  const now = context.state.clock();
  const comment: SandboxComment = {
    id: context.state.nextId(),
    repoId: repo.id,
    issueNumber: pull.number,
    body,
    user: author,
    viaApp,
    createdAt: now,
    updatedAt: now,
  };
  context.state.comments.set(comment.id, comment);
  emitIssueComment(context, repo, pull, comment, 'created', author);
  return comment;
}
