import { kustomizeViews, listImages } from './image-edit/index.js';
import { cell, code, escapeText } from './markdown.js';

export interface DriftVersion {
  name: string;
  tag: string;
  digest?: string;
}

export interface DriftTarget {
  environment: string;
  from: string;
  app: string;
  /** What the PR makes the environment run (its files at head). */
  files: Array<{ path: string; text: string }>;
  /** Versions the source environment runs now or ran before (history). */
  sourceVersions: DriftVersion[];
}

export interface DriftRow {
  environment: string;
  app: string;
  image: string;
  version: string;
  from: string;
}

const same = (a: DriftVersion, b: DriftVersion): boolean =>
  a.name === b.name && a.tag === b.tag && (a.digest === undefined || b.digest === undefined || a.digest === b.digest);

/**
 * Versions in Y that did not come from X: someone edited Y directly. The next promotion from X
 * overrides them, which reviewers should know before they merge.
 */
export function planDrift(targets: readonly DriftTarget[]): DriftRow[] {
  const rows: DriftRow[] = [];
  for (const target of targets) {
    const seen = new Set<string>();
    // An image the target's kustomizations rename to a mirror is read as the mirror.
    const views = kustomizeViews(target.files);
    for (const file of target.files) {
      for (const use of listImages(file.text, { path: file.path, views: views.get(file.path) ?? [] }).uses) {
        if (!use.tag || seen.has(use.name)) continue;
        seen.add(use.name);
        const version = { name: use.name, tag: use.tag, ...(use.digest ? { digest: use.digest } : {}) };
        const known = target.sourceVersions.filter((v) => v.name === use.name);
        if (known.length === 0 || known.some((v) => same(v, version))) continue;
        rows.push({
          environment: target.environment,
          app: target.app,
          image: use.name,
          version: `${use.tag}${use.digest ? `@${use.digest.slice(0, 19)}` : ''}`,
          from: target.from,
        });
      }
    }
  }
  return rows;
}

export function renderDrift(rows: readonly DriftRow[]): {
  conclusion: 'success' | 'neutral';
  title: string;
  summary: string;
} {
  if (rows.length === 0)
    return {
      conclusion: 'success',
      title: 'No drift',
      summary: 'Every version this pull request sets came from the environment it is promoted from.',
    };
  return {
    conclusion: 'neutral',
    title: `${rows.length} version${rows.length === 1 ? '' : 's'} did not come from the source environment`,
    summary: [
      'These versions were set directly, not promoted. The next promotion from the source environment will replace them.',
      '',
      '| Environment | App | Image | Version | Source |',
      '|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${cell(escapeText(r.environment))} | ${cell(escapeText(r.app || '—'))} | ${cell(code(r.image))} | ${cell(code(r.version))} | ${cell(escapeText(r.from))} |`,
      ),
    ].join('\n'),
  };
}
