import type { Candidate } from '../../adapters/store/candidates.js';
import type { Logger } from '../../observability/logger.js';
import { normalizeName } from '../../planners/image-ref.js';
import type { PullMarker } from '../../planners/pull-marker.js';
import type { PromotionRow, RunningVersion } from '../../planners/promotion-plan.js';
import type { BumpJob } from '../../queue/enqueue.js';
import type { JobDeps } from './deps.js';
import { PR_BODY_LIMIT } from '../../planners/release-notes.js';
import { loadReleaseNotes, NOTES_BUDGET, type NotedImage, type NotesFor } from './release-notes.js';

/**
 * The "What changed" section of a bump pull request: each image it sets, from the version the
 * environment runs (`running`, read from the default branch) to the proposed one, with what the
 * image's sender said of its source (the waiting candidates). Read once per job, whatever the
 * number of re-plans (and, for a few minutes, of jobs).
 */
export async function bumpNotes(
  deps: JobDeps,
  data: BumpJob,
  log: Logger,
  images: PullMarker['images'],
  running: Map<string, RunningVersion>,
  waiting: readonly Candidate[],
  /** The body without notes: the notes take what GitHub's limit leaves of it. */
  body: string,
): Promise<string> {
  if (!deps.notes) return '';
  const noted: NotedImage[] = images.map((image) => {
    const name = normalizeName(image.repository) ?? image.repository;
    const now = running.get(name);
    const sent = waiting.find((c) => c.repository === image.repository && c.tag === image.tag);
    return {
      repository: name,
      ...(now && (now.tag !== image.tag || now.digest !== image.digest)
        ? { from: { tag: now.tag, ...(now.digest ? { digest: now.digest } : {}) } }
        : {}),
      to: { tag: image.tag, ...(image.digest ? { digest: image.digest } : {}) },
      ...(sent?.sourceUrl ? { sourceUrl: sent.sourceUrl } : {}),
      ...(sent?.revision ? { revision: sent.revision } : {}),
    };
  });
  return remembered(
    deps,
    { installationId: data.installationId, owner: data.owner, repo: data.repo },
    noted,
    log,
    body,
  );
}

/**
 * The "What changed" section of a promotion pull request: each row, from the version the target
 * environment runs to the one the source environment runs (the range covers every version in
 * between, shown once).
 */
export async function promotionNotes(
  deps: JobDeps,
  /** The GitOps repository of the pull request and its installation. */
  pull: NotesFor,
  log: Logger,
  rows: readonly PromotionRow[],
  /** The body without notes: the notes take what GitHub's limit leaves of it. */
  body: string,
): Promise<string> {
  if (!deps.notes || rows.length === 0) return '';
  const seen = new Set<string>();
  const noted: NotedImage[] = [];
  for (const row of rows) {
    const key = `${row.image}\n${row.from ?? ''}\n${row.to}\n${row.digest ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    noted.push({
      repository: row.image,
      ...(row.from ? { from: { tag: row.from } } : {}),
      to: { tag: row.to, ...(row.digest ? { digest: row.digest } : {}) },
    });
  }
  return remembered(deps, pull, noted, log, body);
}

async function remembered(
  deps: JobDeps,
  pull: NotesFor,
  noted: NotedImage[],
  log: Logger,
  body: string,
): Promise<string> {
  if (!deps.notes) return '';
  // At most NOTES_BUDGET, and never past GitHub's limit with the rest of the body (and a margin).
  const budget = Math.max(0, Math.min(NOTES_BUDGET, PR_BODY_LIMIT - body.length - 1_000));
  const key = JSON.stringify([pull.installationId, pull.owner, pull.repo, noted, budget]);
  const now = deps.now().getTime();
  const cached = memo.get(key);
  if (cached && cached.until > now) return cached.text;
  const text = await loadReleaseNotes(deps.github, deps.notes, noted, { ...pull, log, budget });
  memo.set(key, { text, until: now + MEMO_MS });
  if (memo.size > 100) memo.delete(memo.keys().next().value as string);
  return text;
}

/**
 * Notes by what they describe, for a few minutes: a re-plan after a conflict, or the next bump of
 * the same versions, reads nothing again; a label or installation added later shows soon after.
 */
const memo = new Map<string, { text: string; until: number }>();
const MEMO_MS = 5 * 60_000;
