import type { SandboxContext } from './context.js';
import { emitIssueComment } from './events.js';
import type { IssueRecord, SandboxComment, SandboxRepo, SandboxUser } from './model.js';

/** Adds a comment to an issue's or pull request's conversation and sends `issue_comment` created. */
export function createComment(
  context: SandboxContext,
  repo: SandboxRepo,
  record: IssueRecord,
  author: SandboxUser,
  body: string,
  viaApp: boolean,
): SandboxComment {
  const now = context.state.clock();
  const comment: SandboxComment = {
    id: context.state.nextId(),
    repoId: repo.id,
    issueNumber: record.number,
    body,
    user: author,
    viaApp,
    createdAt: now,
    updatedAt: now,
  };
  context.state.comments.set(comment.id, comment);
  emitIssueComment(context, repo, record, comment, 'created', author);
  return comment;
}
