import { readFileSync, writeFileSync } from 'node:fs';
import { join, isAbsolute } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { FLUX_POLICY_PATTERN } from '../config/repo-config.schema.js';
import {
  addImageEntry,
  editImages,
  editOptionsFor,
  editSettingsFrom,
  kustomizationPaths,
  kustomizationRefs,
  kustomizationSiblings,
  kustomizeViews,
  listImages,
  missingImageEntries,
} from '../planners/image-edit/index.js';
import { formatImageRef, normalizedName, parseImageRef } from '../planners/image-ref.js';
import { decodeUtf8 } from '../planners/yaml-guard.js';
import { collectYamlFiles } from './files.js';
import { parseArgs, terminalJson, UsageError, type CliIo, type ExitCode } from './io.js';

export const setImageHelp = `Usage: escalator set-image <image> <path…> [--dry-run] [--json] [--pin-digest]
                         [--flux-policy <ns:name>[,…]] [--helm-dotted-keys] [--add-entries]

Set the tag (and digest) of <image> in every YAML file under <path…>: Kustomize images:,
Helm values, plain manifests, Argo CD Applications, Flux HelmReleases and Kustomizations, and
YAML held in strings (helm.values: |, a ConfigMap's values.yaml, inline patches). Only the
changed values are rewritten; every other byte of each file stays as it was.

  <image>        repo:tag or repo:tag@sha256:… (e.g. ghcr.io/example/hello:1.2.3)
  <path…>        files, or directories searched recursively for .yaml/.yml and Kustomization
                 (Helm chart templates/ are skipped)
  --dry-run      print a unified diff instead of writing files
  --json         print {changed:[{path,field,line,from,to}], unchanged:[path], refused:[{path,reason,line}],
                 left:[{path,reason,line}]}
  --pin-digest   with repo:tag@sha256:…, also add the digest where a file does not pin one yet
                 (what images[].pinDigest: true makes the App do)
  --no-new-pins  accepted for compatibility: a digest given is written only where a file already
                 pins one by default
  --flux-policy  Flux image policies whose setter markers set <image> (images[].fluxPolicies):
                 fields marked for them are written, a :name field and a full reference with
                 <image>'s name; fields marked for other policies are left alone
  --helm-dotted-keys  edit literal dotted keys (image.tag: as one key) the chart reads as they are
                 (images[].helmDottedKeys); without it they are refused with their line
  --add-entries  add an images: entry, as kustomize edit set image does, to kustomizations under
                 <path…> that render <image> through the files under <path…> but have no entry
                 for it (environments[].addImages), in the file's own style

Digests: the command previews exactly what the App writes for the same image and settings.
With repo:tag@sha256:… the digest is written where a file pins one (images[].pinDigest defaults
to false, as in Renovate, Argo CD Image Updater, Flux and Kargo); with --pin-digest it is also
added where a file does not (Kustomize digest:, tag@digest in strings and Helm tags). With
repo:tag alone, a file that pins a digest is refused: its pin cannot be kept true without it.
Files that do not mention the image are left alone. An image that no file mentions (as it
renders: a Kustomize newName rename counts) is an error, so a misspelled name cannot pass.
One bad entry does not hold back a file: the other entries are written and the bad one is
printed as "left" with its line and reason (so are template documents of a multi-document file
that may hold the image).
Exit status: 0 every mention written or already current; 2 something refused or left (the files
and entries that could be edited are still written), no file mentions the image, or bad
arguments; 1 unexpected failure.`;

export interface SetImageReport {
  changed: Array<{ path: string; field: string; line: number; from: string; to: string }>;
  unchanged: string[];
  refused: Array<{ path: string; reason: string; line?: number }>;
  /** Entries left as they were in files that were otherwise written. */
  left: Array<{ path: string; reason: string; line?: number }>;
}

export function runSetImage(argv: string[], io: CliIo): ExitCode {
  const args = parseArgs(argv, {
    flags: ['dry-run', 'json', 'pin-digest', 'no-new-pins', 'helm-dotted-keys', 'add-entries', 'help'],
    options: ['flux-policy'],
  });
  if (args.flags.has('help')) {
    io.stdout(`${setImageHelp}\n`);
    return 0;
  }
  const [image, ...paths] = args.positionals;
  if (!image || paths.length === 0) throw new UsageError('set-image needs an image and at least one path');
  const parsed = parseImageRef(image);
  if (!parsed.ok) throw new UsageError(`"${image}" is not a valid image reference: ${parsed.reason}`);
  if (!parsed.ref.tag) throw new UsageError(`"${image}" has no tag; write it as repo:tag or repo:tag@sha256:…`);
  if (args.flags.has('pin-digest') && args.flags.has('no-new-pins'))
    throw new UsageError('--pin-digest and --no-new-pins contradict each other; give one of them');
  const repository = formatImageRef({ ...parsed.ref, tag: undefined, digest: undefined });
  const event = {
    repository,
    tag: parsed.ref.tag,
    ...(parsed.ref.digest ? { digest: parsed.ref.digest } : {}),
  };
  const policies = (args.options.get('flux-policy') ?? '').split(',').filter((policy) => policy !== '');
  const badPolicy = policies.find((policy) => !FLUX_POLICY_PATTERN.test(policy));
  if (badPolicy !== undefined)
    throw new UsageError(
      `--flux-policy ${JSON.stringify(badPolicy)} is not <namespace>:<name>; write it as the markers name it, e.g. flux-system:hello (without :tag, :name or :digest)`,
    );
  const settings = editOptionsFor(
    editSettingsFrom([
      { name: repository, fluxPolicies: policies, helmDottedKeys: args.flags.has('helm-dotted-keys') },
    ]),
    repository,
  );
  // The App's default (images[].pinDigest: false): a digest given is written where a file pins
  // one, and added elsewhere only with --pin-digest, so the command previews what the App writes.
  const pinDigest = parsed.ref.digest !== undefined && args.flags.has('pin-digest');

  const { files, missing } = collectYamlFiles(paths, io.cwd);
  if (missing.length > 0) throw new UsageError(`no such file or directory: ${missing.join(', ')}`);
  const report: SetImageReport = { changed: [], unchanged: [], refused: [], left: [] };
  const patches: string[] = [];
  const read = files.map((path) => {
    const absolute = isAbsolute(path) ? path : join(io.cwd, path);
    const bytes = readFileSync(absolute);
    const decoded = decodeUtf8(bytes);
    return { path, absolute, decoded, text: 'text' in decoded ? decoded.text : bytes.toString('utf8') };
  });
  // Which kustomizations among the files rename which images (an image is set where it renders as itself).
  const views = kustomizeViews(read.filter(({ decoded }) => 'text' in decoded));
  // Two kustomizations in one directory: kustomize builds neither, so neither is edited.
  const siblings = kustomizationSiblings(read.map(({ path }) => path));
  let mentioned = 0;
  const mentioning = new Set<string>();
  const written = new Map<string, string>();
  for (const { path, absolute, decoded, text } of read) {
    const result = editImages(text, event, {
      path,
      pinDigest,
      views: views.get(path) ?? [],
      siblings: siblings.get(path) ?? [],
      origin: 'command-line',
      ...settings,
    });
    if (!result.mentions) continue;
    mentioned += 1;
    mentioning.add(path);
    if ('problem' in decoded) {
      report.refused.push({ path, reason: decoded.problem }); // writing it back would replace its invalid bytes
      continue;
    }
    if (result.refused.length > 0) {
      for (const refusal of result.refused)
        report.refused.push({ path, reason: refusal.reason, ...(refusal.line ? { line: refusal.line } : {}) });
      continue;
    }
    if (result.changed.length === 0) {
      report.unchanged.push(path);
      continue;
    }
    for (const left of result.left)
      report.left.push({ path, reason: left.reason, ...(left.line ? { line: left.line } : {}) });
    for (const change of result.changed)
      report.changed.push({ path, field: change.path, line: change.line, from: change.from, to: change.to });
    written.set(path, result.text);
    if (args.flags.has('dry-run'))
      patches.push(
        createTwoFilesPatch(`a/${path}`, `b/${path}`, text, result.text, undefined, undefined, { context: 3 }),
      );
    else writeFileSync(absolute, result.text);
  }
  if (args.flags.has('add-entries')) {
    // Kustomizations that render the image through the files read, with no entry for it, get one.
    const readable = read.flatMap(({ path, decoded }) =>
      'text' in decoded ? [{ path, text: written.get(path) ?? decoded.text }] : [],
    );
    // The bases they list outside <path…> are read too, to know what they render (never written).
    const around = readRendered(readable, io.cwd);
    // Only the roots (overlays): a base another kustomization lists is left to its overlays.
    const listed = new Set(
      readable.flatMap((file) =>
        kustomizationRefs(file.path, file.text).flatMap((ref) => [ref, ...kustomizationPaths(ref)]),
      ),
    );
    const missing = missingImageEntries(
      [...readable, ...around],
      readable.map((file) => file.path).filter((path) => !mentioning.has(path) && !listed.has(path)),
      normalizedName(parsed.ref),
      (file) => listImages(file.text, { path: file.path }).uses.map((use) => use.written),
    );
    for (const [path, name] of missing) {
      const file = read.find((candidate) => candidate.path === path);
      if (!file) continue;
      mentioned += 1;
      const result = addImageEntry(file.text, event, { path, name, pinDigest });
      for (const refusal of result.refused)
        report.refused.push({ path, reason: refusal.reason, ...(refusal.line ? { line: refusal.line } : {}) });
      if (result.changed.length === 0) continue;
      for (const change of result.changed)
        report.changed.push({ path, field: change.path, line: change.line, from: change.from, to: change.to });
      if (args.flags.has('dry-run'))
        patches.push(
          createTwoFilesPatch(`a/${path}`, `b/${path}`, file.text, result.text, undefined, undefined, { context: 3 }),
        );
      else writeFileSync(file.absolute, result.text);
    }
  }

  if (args.flags.has('json')) io.stdout(`${terminalJson(JSON.stringify(report, null, 2))}\n`);
  else if (args.flags.has('dry-run')) io.stdout(patches.map(stripIndexLine).join(''));
  else io.stdout(renderReport(report, files.length));
  if (!args.flags.has('json')) {
    for (const refusal of report.refused)
      io.stderr(`${refusal.path}${refusal.line ? `:${refusal.line}` : ''}: refused: ${refusal.reason}\n`);
    for (const left of report.left)
      io.stderr(
        `${left.path}${left.line ? `:${left.line}` : ''}: left: ${left.reason} (the rest of the file was written)\n`,
      );
  }
  if (mentioned === 0) {
    io.stderr(
      `no file under ${paths.join(', ')} sets ${repository} (${files.length} YAML file${files.length === 1 ? '' : 's'} scanned; an image a kustomization renames with newName counts as the new name), so nothing was changed; check the image name (any spelling matches: nginx is docker.io/library/nginx) and the path\n`,
    );
    return 2;
  }
  return report.refused.length > 0 || report.left.length > 0 ? 2 : 0;
}

/** Files the kustomizations among `files` reach (resources, bases, components) that are not among them, read from disk. */
function readRendered(
  files: ReadonlyArray<{ path: string; text: string }>,
  cwd: string,
): Array<{ path: string; text: string }> {
  const known = new Set(files.map((file) => file.path));
  const found: Array<{ path: string; text: string }> = [];
  const queue = files.flatMap((file) => kustomizationRefs(file.path, file.text));
  const readText = (path: string): string | undefined => {
    try {
      const decoded = decodeUtf8(readFileSync(join(cwd, path)));
      return 'text' in decoded ? decoded.text : undefined;
    } catch {
      return undefined; // a directory, or missing: tried as a directory's kustomization next
    }
  };
  while (queue.length > 0 && found.length < 500) {
    const target = queue.shift() as string;
    if (known.has(target) || kustomizationPaths(target).some((path) => known.has(path))) continue;
    known.add(target);
    for (const path of [target, ...kustomizationPaths(target)]) {
      const text = readText(path);
      if (text === undefined) continue;
      known.add(path);
      found.push({ path, text });
      queue.push(...kustomizationRefs(path, text));
      break;
    }
  }
  return found;
}

/** `diff` starts each patch with a `===` rule (and `Index:` for single-file patches); git-style output has neither. */
function stripIndexLine(patch: string): string {
  return patch.replace(/^(Index: .*\n)?=+\n/, '');
}

function renderReport(report: SetImageReport, scanned: number): string {
  const lines = report.changed.map(
    (c) => `changed   ${c.path}:${c.line}  ${c.field}  ${c.from || '(unset)'} → ${c.to}`,
  );
  for (const path of report.unchanged) lines.push(`current   ${path}`);
  const files = new Set(report.changed.map((c) => c.path)).size;
  // Files, not reasons: a file refused for two reasons is one file refused (each reason is printed).
  const refused = new Set(report.refused.map((r) => r.path)).size;
  lines.push(
    `${files} file${files === 1 ? '' : 's'} changed, ${report.unchanged.length} already current, ${refused} refused${report.left.length > 0 ? `, ${report.left.length} entr${report.left.length === 1 ? 'y' : 'ies'} left` : ''} (${scanned} YAML file${scanned === 1 ? '' : 's'} scanned)`,
  );
  return `${lines.join('\n')}\n`;
}
