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
    return typeof value === 'object' && value !== null && (value.kind === 'bump' || value.kind === 'promote') && Array.isArray(value.images) ? value : null;
  } catch {
    return null;
  }
}
