import { code } from './markdown.js';

/**
 * The hidden marker in the body of every pull request Escalator opens:
 * `<!-- escalator:v1 {"kind":"bump",…} -->`. State lives in GitHub and survives restarts: the
 * marker is found again, parsed, and rendered back byte for byte.
 */
export interface PullMarker {
  kind: 'bump' | 'promote';
  environment: string;
  app: string;
  /** Every image the pull request sets, with the version it sets. */
  images: Array<{ repository: string; tag: string; digest?: string }>;
  /** Where the version came from (registry delivery ids, or the source environment's PR/commit). */
  sources?: string[];
  /**
   * The waiting configuration changes the promotion carries or reports (their ids,
   * `<environment>:<merge commit>`): done for the target when it merges, and the next hop's.
   */
  config?: string[];
}

const pattern = /<!-- escalator:v1 (\{.*?\}) -->/s;

export function renderMarker(marker: PullMarker): string {
  // `--` cannot appear inside an HTML comment; JSON strings never need it unescaped.
  return `<!-- escalator:v1 ${JSON.stringify(marker).replace(/--/g, '-\\u002d')} -->`;
}

export function parseMarker(body: string | null | undefined): PullMarker | null {
  const match = pattern.exec(body ?? '');
  if (!match) return null;
  try {
    const value = JSON.parse(match[1] as string) as PullMarker;
    const text = (v: unknown): boolean => typeof v === 'string' && v.length <= 512;
    // Repository text: a forged marker must not be able to make the next run trip over it.
    const valid =
      typeof value === 'object' &&
      value !== null &&
      (value.kind === 'bump' || value.kind === 'promote') &&
      text(value.environment) &&
      text(value.app) &&
      Array.isArray(value.images) &&
      value.images.every(
        (image) =>
          typeof image === 'object' &&
          image !== null &&
          text(image.repository) &&
          text(image.tag) &&
          (image.digest === undefined || text(image.digest)),
      ) &&
      (value.sources === undefined || (Array.isArray(value.sources) && value.sources.every(text))) &&
      (value.config === undefined ||
        (Array.isArray(value.config) && value.config.length <= 100 && value.config.every(text)));
    return valid ? value : null;
  } catch {
    return null;
  }
}

/** What a pull request event tells of who opened a pull request and from where. */
export interface PullOrigin {
  body?: string | null;
  user?: { type?: string; login?: string } | null;
  head: { ref: string; repo?: { full_name?: string } | null };
}

/**
 * The marker of a pull request Escalator opened, or null. Only a pull request opened by this App
 * (its own `<slug>[bot]` login, not any App's) from an `escalator/` branch of the same repository
 * counts: anyone can paste a marker into the body of their own pull request, any App installed on
 * the repository can open one, and a merged forgery must not write provenance.
 */
export function escalatorMarker(pull: PullOrigin, repository: string, botLogin: string): PullMarker | null {
  if (
    pull.user?.type !== 'Bot' ||
    pull.user.login !== botLogin ||
    !pull.head.ref.startsWith('escalator/') ||
    pull.head.repo?.full_name !== repository
  )
    return null;
  return parseMarker(pull.body);
}

/**
 * A promotion pull request Escalator opened: by this App's bot (`<slug>[bot]`), from an
 * `escalator/promote/` branch of the same repository. A branch name alone proves nothing (anyone
 * with write access can push one); the author does.
 */
export function isEscalatorPromotion(pull: PullOrigin, repository: string, botLogin: string): boolean {
  return (
    pull.user?.type === 'Bot' &&
    pull.user.login === botLogin &&
    pull.head.ref.startsWith('escalator/promote/') &&
    pull.head.repo?.full_name === repository
  );
}

/**
 * How many branches one living pull request may take: its deterministic branch, then `<branch>@2`
 * … `<branch>@5` when a branch is held by a pull request Escalator did not write.
 */
export const LIVING_BRANCHES = 5;

/**
 * The branches one (environment, app) may use, in order: `escalator/dev/hello`, then
 * `escalator/dev/hello@2`, …. A `/` cannot start the suffix (git refuses a ref below another
 * ref), and `@` followed by a digit reads as "another copy" without clashing with `@{`.
 */
export function livingBranches(branch: string): string[] {
  return Array.from({ length: LIVING_BRANCHES }, (_, i) => (i === 0 ? branch : `${branch}@${i + 1}`));
}

/** The deterministic branch a living branch is a copy of (`escalator/dev/hello@2` → `escalator/dev/hello`). */
export function livingBranchBase(ref: string): string {
  const match = /^(escalator\/.+)@([2-9]|[1-9]\d+)$/.exec(ref);
  return match ? (match[1] as string) : ref;
}

/** The first line of the note Escalator leaves on a pull request it will not build on. */
export const LEFT_ALONE_MARKER = '<!-- escalator:left-alone -->';

/** Why a pull request on one of Escalator's branches is not Escalator's to build on. */
export type ForeignReason =
  { kind: 'opened-by'; login: string } | { kind: 'commit'; sha: string; login: string | null };

/** The one note on a pull request Escalator leaves alone, saying why and where it continues. */
export function renderLeftAloneNote(reason: ForeignReason, branch: string): string {
  const who = (login: string | null): string => (login ? ` by @${login.replace(/[^A-Za-z0-9_.[\]-]/g, '')}` : '');
  const why =
    reason.kind === 'opened-by'
      ? `it was opened${who(reason.login) || ' by someone else'}, not by Escalator`
      : `it holds commits Escalator did not write (${code(reason.sha.slice(0, 7))}${who(reason.login)})`;
  return [
    LEFT_ALONE_MARKER,
    `Escalator leaves this pull request alone: ${why}. Escalator builds on, edits and merges only pull requests it opened itself and whose every commit it wrote, so it will not update, retitle or merge this one.`,
    '',
    `Its own updates for ${code(branch)} continue on a branch only Escalator writes (${code(`${branch}@2`)} or the next free one). Review this pull request like any other change.`,
  ].join('\n');
}
