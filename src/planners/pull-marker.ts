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
      typeof value === 'object' && value !== null && (value.kind === 'bump' || value.kind === 'promote') && text(value.environment) && text(value.app) &&
      Array.isArray(value.images) && value.images.every((image) => typeof image === 'object' && image !== null && text(image.repository) && text(image.tag) && (image.digest === undefined || text(image.digest))) &&
      (value.sources === undefined || (Array.isArray(value.sources) && value.sources.every(text)));
    return valid ? value : null;
  } catch {
    return null;
  }
}

/** What a pull request event tells of who opened a pull request and from where. */
export interface PullOrigin {
  body?: string | null;
  user?: { type?: string } | null;
  head: { ref: string; repo?: { full_name?: string } | null };
}

/**
 * The marker of a pull request Escalator opened, or null. Only a pull request opened by a GitHub
 * App from an `escalator/` branch of the same repository counts: anyone can paste a marker into
 * the body of their own pull request, and a merged forgery must not write provenance.
 */
export function escalatorMarker(pull: PullOrigin, repository: string): PullMarker | null {
  if (pull.user?.type !== 'Bot' || !pull.head.ref.startsWith('escalator/') || pull.head.repo?.full_name !== repository) return null;
  return parseMarker(pull.body);
}
