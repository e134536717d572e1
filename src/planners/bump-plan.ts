import {
  addImageEntry,
  editImages,
  editOptionsFor,
  kustomizationPaths,
  kustomizationRefs,
  kustomizationSiblings,
  kustomizeViews,
  listImages,
  missingImageEntries,
  type EditSettings,
} from './image-edit/index.js';
import { normalizeName, sameRepository } from './image-ref.js';
import { cell, code, escapeText, refusalLines, type Refusal } from './markdown.js';
import { renderMarker, type PullMarker } from './pull-marker.js';
import { isUpgrade, type TagPolicy } from './tag-policy.js';

export interface BumpFile {
  path: string;
  text: string;
}

export interface BumpImage {
  repository: string;
  tag: string;
  digest?: string;
}

export interface BumpInput {
  environment: string;
  app: string;
  /** The target's files as they are on the branch the commit will go on. */
  files: BumpFile[];
  /** The images to write, each with its policy; applied in order, so one file can take several. */
  images: Array<{ image: BumpImage; policy: TagPolicy }>;
  /** The marker of the living pull request, when one exists: images set by earlier bumps. */
  existing?: PullMarker | null;
  /** The configuration's editor settings (Flux policies, dotted Helm keys); see `editSettingsFrom`. */
  editing?: EditSettings;
  /**
   * `environments[].addImages`: add an `images:` entry to the target's kustomizations that render
   * an image but have none for it. `rendered` holds the files they reach outside the target
   * (bases), read only to decide what they render.
   */
  addImages?: { rendered: BumpFile[] };
}

export interface BumpChange {
  path: string;
  field: string;
  line: number;
  from: string;
  to: string;
}

/** A plan is data; one adapter applies it (commit, ref, pull request). */
export interface BumpPlan {
  branch: string;
  title: string;
  body: string;
  commitMessage: string;
  marker: PullMarker;
  /** Final content of every file that changes. */
  updates: Array<{ path: string; content: string }>;
  changes: BumpChange[];
  refused: Refusal[];
  /** Files that already run these versions or newer ones. */
  current: string[];
}

/** `escalator/<env>/<app>`: deterministic, so the living PR is found again after any restart. */
export function bumpBranch(environment: string, app: string): string {
  return app ? `escalator/${environment}/${app}` : `escalator/${environment}`;
}

function shortName(repository: string): string {
  return repository.split('/').pop() ?? repository;
}

/**
 * Plan the bump of one (environment, app) to one or more images:
 * 1. per image, skip files whose version is the same or newer under the image's policy
 * 2. edit the rest with the byte-preserving editor; refusals are kept, never dropped
 * 3. merge the images into the living PR's marker; render title, body and commit message
 */
export function planBump(input: BumpInput): BumpPlan {
  const texts = new Map(input.files.map((file) => [file.path, file.text]));
  const changed = new Set<string>();
  const changes: BumpChange[] = [];
  const refused: BumpPlan['refused'] = [];
  const current = new Set<string>();
  let images = [...(input.existing?.images ?? [])];
  // Which kustomizations among the files rename which images: an image is bumped where it renders as itself.
  const views = kustomizeViews(input.files);
  const siblings = kustomizationSiblings(input.files.map((file) => file.path));

  for (const { image, policy } of input.images) {
    const event = { repository: image.repository, tag: image.tag, ...(image.digest ? { digest: image.digest } : {}) };
    let wrote = false;
    // A file already at this very tag: the branch holds the image even though this plan writes nothing.
    let holds = false;
    const mentioned = new Set<string>();
    for (const [path, text] of texts) {
      const uses = listImages(text, { path, views: views.get(path) ?? [] }).uses.filter((use) =>
        sameRepository(use.name, image.repository),
      );
      // Same tag: current unless the file pins another digest (the tag was pushed again).
      // Other tag: current when moving to it would go backwards under the policy.
      const isCurrent = (use: (typeof uses)[number]): boolean =>
        use.tag === image.tag
          ? !(image.digest && use.digest && use.digest !== image.digest)
          : !isUpgrade(policy, use.tag, image.tag);
      if (uses.length > 0) mentioned.add(path);
      if (uses.length > 0 && uses.every(isCurrent)) {
        current.add(path);
        if (uses.every((use) => use.tag === image.tag)) holds = true;
        continue;
      }
      // The editor judges every file that mentions the image, including ones it must refuse.
      const result = editImages(text, event, {
        path,
        pinDigest: policy.pinDigest,
        views: views.get(path) ?? [],
        siblings: siblings.get(path) ?? [],
        ...editOptionsFor(input.editing, image.repository),
      });
      if (!result.mentions) continue;
      mentioned.add(path);
      if (result.refused.length > 0) {
        for (const refusal of result.refused)
          refused.push({ path, reason: refusal.reason, ...(refusal.line ? { line: refusal.line } : {}) });
        continue;
      }
      if (result.changed.length === 0) {
        current.add(path);
        continue;
      }
      // Entries left beside the ones written: the pull request body says which and why.
      for (const left of result.left)
        refused.push({ path, reason: left.reason, ...(left.line ? { line: left.line } : {}), left: true });
      texts.set(path, result.text);
      changed.add(path);
      wrote = true;
      for (const change of result.changed)
        changes.push({ path, field: change.path, line: change.line, from: change.from, to: change.to });
    }
    if (input.addImages) {
      // Kustomizations of the target that render the image without an entry for it get one.
      const name = normalizeName(image.repository) ?? image.repository;
      // Only the roots among the target's kustomizations: one another lists renders through it.
      const listed = new Set(
        [...texts].flatMap(([path, text]) =>
          kustomizationRefs(path, text).flatMap((ref) => [ref, ...kustomizationPaths(ref)]),
        ),
      );
      const candidates = [...texts.keys()].filter((path) => !mentioned.has(path) && !listed.has(path));
      const missing = missingImageEntries(
        [...[...texts].map(([path, text]) => ({ path, text })), ...input.addImages.rendered],
        candidates,
        name,
        (file) => listImages(file.text, { path: file.path }).uses.map((use) => use.written),
      );
      for (const [path, written] of missing) {
        const result = addImageEntry(texts.get(path) as string, event, {
          path,
          name: written,
          pinDigest: policy.pinDigest,
        });
        for (const refusal of result.refused)
          refused.push({ path, reason: refusal.reason, ...(refusal.line ? { line: refusal.line } : {}) });
        if (result.changed.length === 0) continue;
        texts.set(path, result.text);
        changed.add(path);
        wrote = true;
        for (const change of result.changed)
          changes.push({ path, field: change.path, line: change.line, from: change.from, to: change.to });
      }
    }
    // A marker naming another tag of an image the files hold at this one is stale: a run that moved
    // the branch and was stopped before it updated the pull request's text (its write budget spent,
    // a crash) left it so. Title and body follow the files.
    const stale =
      holds && images.some((entry) => sameRepository(entry.repository, image.repository) && entry.tag !== image.tag);
    if (wrote || stale) {
      images = images.filter((entry) => !sameRepository(entry.repository, image.repository));
      images.push(event);
    }
  }

  // A file refused for every image of the plan (it does not parse) is one refusal, not one per image.
  const seen = new Set<string>();
  const unique = refused.filter((refusal) => {
    const key = `${refusal.path}\u0000${refusal.line ?? ''}\u0000${refusal.reason}\u0000${refusal.left === true}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  refused.length = 0;
  refused.push(...unique);

  images.sort((a, b) => a.repository.localeCompare(b.repository));
  const marker: PullMarker = { kind: 'bump', environment: input.environment, app: input.app, images };
  const title = renderBumpTitle(marker);
  const written = input.images.filter(({ image }) =>
    images.some((entry) => entry.repository === image.repository && entry.tag === image.tag),
  );
  return {
    branch: bumpBranch(input.environment, input.app),
    title,
    body: renderBumpBody(marker, refused),
    commitMessage: `${written.length === 1 ? `Bump ${shortName(written[0]!.image.repository)} to ${written[0]!.image.tag} in ${input.environment}` : `Bump ${written.length} images in ${input.environment}`}\n\n${changes.map((c) => `${c.path}: ${c.field} ${c.from || '(unset)'} -> ${c.to}`).join('\n')}\n`,
    marker,
    updates: [...changed].map((path) => ({ path, content: texts.get(path) as string })),
    changes,
    refused,
    current: [...current].filter((path) => !changed.has(path)),
  };
}

export function renderBumpTitle(marker: PullMarker): string {
  const [only] = marker.images;
  const where = `${marker.environment}${marker.app && (!only || marker.images.length > 1 || marker.app !== shortName(only.repository)) ? ` (${marker.app})` : ''}`;
  return marker.images.length === 1 && only
    ? `Bump ${shortName(only.repository)} to ${only.tag} in ${where}`
    : `Bump ${marker.images.length} images in ${where}`;
}

/** A link to the image's page on registries that have a public one. */
export function registryLink(repository: string): string | undefined {
  // Only names of the reference grammar become links; anything else (a forged marker) stays text.
  if (!/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/.test(repository)) return undefined;
  const [host, ...rest] = repository.split('/');
  const path = rest.join('/');
  if (host === 'ghcr.io' && rest.length >= 2)
    return `https://github.com/${rest[0]}/${rest.slice(1).join('/')}/pkgs/container/${rest.slice(1).join('%2F')}`;
  if (host === 'docker.io')
    return rest[0] === 'library'
      ? `https://hub.docker.com/_/${rest.slice(1).join('/')}`
      : `https://hub.docker.com/r/${path}`;
  if (host === 'quay.io') return `https://quay.io/repository/${path}`;
  return undefined;
}

/**
 * The pull request body; a function of the marker, refusals and release notes only, so it is
 * stable across runs. `notes` is the "What changed" section (src/planners/release-notes.ts).
 */
export function renderBumpBody(marker: PullMarker, refused: BumpPlan['refused'], notes = ''): string {
  const rows = marker.images.map((entry) => {
    const link = registryLink(entry.repository);
    const name = link ? `[${code(entry.repository)}](${link})` : code(entry.repository);
    return `| ${cell(name)} | ${cell(code(entry.tag))} | ${entry.digest ? cell(code(entry.digest)) : '—'} |`;
  });
  const lines = [
    `Escalator updates **${escapeText(marker.environment)}**${marker.app ? ` · app **${escapeText(marker.app)}**` : ''} to newly published images.`,
    '',
    '| Image | Tag | Digest |',
    '|---|---|---|',
    ...rows,
  ];
  lines.push(...refusalLines(refused));
  if (notes) lines.push('', notes);
  lines.push(
    '',
    '<sub>A newer image updates this pull request. Close it to skip these versions.</sub>',
    renderMarker(marker),
  );
  return `${lines.join('\n')}\n`;
}
