import { readFileSync, writeFileSync } from 'node:fs';
import { join, isAbsolute } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { editImages } from '../planners/image-edit/index.js';
import { formatImageRef, parseImageRef } from '../planners/image-ref.js';
import { decodeUtf8 } from '../planners/yaml-guard.js';
import { collectYamlFiles } from './files.js';
import { parseArgs, terminalJson, UsageError, type CliIo, type ExitCode } from './io.js';

export const setImageHelp = `Usage: escalator set-image <image> <path…> [--dry-run] [--json] [--pin-digest]

Set the tag (and digest) of <image> in every YAML file under <path…>: Kustomize images:,
Helm values, plain manifests, Argo CD Applications. Only the changed values are rewritten;
every other byte of each file stays as it was.

  <image>        repo:tag or repo:tag@sha256:… (e.g. ghcr.io/example/hello:1.2.3)
  <path…>        files, or directories searched recursively for .yaml/.yml
                 (Helm chart templates/ are skipped)
  --dry-run      print a unified diff instead of writing files
  --json         print {changed:[{path,from,to}], unchanged:[path], refused:[{path,reason}]}
  --pin-digest   add the digest where the file does not pin one yet

Files that do not mention the image are left alone.
Exit status: 0 nothing refused, 2 something refused or bad arguments, 1 unexpected failure.`;

export interface SetImageReport {
  changed: Array<{ path: string; field: string; line: number; from: string; to: string }>;
  unchanged: string[];
  refused: Array<{ path: string; reason: string; line?: number }>;
}

export function runSetImage(argv: string[], io: CliIo): ExitCode {
  const args = parseArgs(argv, { flags: ['dry-run', 'json', 'pin-digest', 'help'] });
  if (args.flags.has('help')) {
    io.stdout(`${setImageHelp}\n`);
    return 0;
  }
  const [image, ...paths] = args.positionals;
  if (!image || paths.length === 0) throw new UsageError('set-image needs an image and at least one path');
  const parsed = parseImageRef(image);
  if (!parsed.ok) throw new UsageError(`"${image}" is not a valid image reference: ${parsed.reason}`);
  if (!parsed.ref.tag) throw new UsageError(`"${image}" has no tag; write it as repo:tag or repo:tag@sha256:…`);
  const event = {
    repository: formatImageRef({ ...parsed.ref, tag: undefined, digest: undefined }),
    tag: parsed.ref.tag,
    ...(parsed.ref.digest ? { digest: parsed.ref.digest } : {}),
  };

  const { files, missing } = collectYamlFiles(paths, io.cwd);
  if (missing.length > 0) throw new UsageError(`no such file or directory: ${missing.join(', ')}`);
  const report: SetImageReport = { changed: [], unchanged: [], refused: [] };
  const patches: string[] = [];
  for (const path of files) {
    const absolute = isAbsolute(path) ? path : join(io.cwd, path);
    const bytes = readFileSync(absolute);
    const decoded = decodeUtf8(bytes);
    const text = 'text' in decoded ? decoded.text : bytes.toString('utf8');
    const result = editImages(text, event, { path, pinDigest: args.flags.has('pin-digest') });
    if (!result.mentions) continue;
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
    for (const change of result.changed)
      report.changed.push({ path, field: change.path, line: change.line, from: change.from, to: change.to });
    if (args.flags.has('dry-run'))
      patches.push(
        createTwoFilesPatch(`a/${path}`, `b/${path}`, text, result.text, undefined, undefined, { context: 3 }),
      );
    else writeFileSync(absolute, result.text);
  }

  if (args.flags.has('json')) io.stdout(`${terminalJson(JSON.stringify(report, null, 2))}\n`);
  else if (args.flags.has('dry-run')) io.stdout(patches.map(stripIndexLine).join(''));
  else io.stdout(renderReport(report, files.length));
  if (report.refused.length > 0 && !args.flags.has('json')) {
    for (const refusal of report.refused)
      io.stderr(`${refusal.path}${refusal.line ? `:${refusal.line}` : ''}: refused: ${refusal.reason}\n`);
  }
  return report.refused.length > 0 ? 2 : 0;
}

/** `diff` starts each patch with a `===` rule (and `Index:` for single-file patches); git-style output has neither. */
function stripIndexLine(patch: string): string {
  return patch.replace(/^(Index: .*\n)?=+\n/, '');
}

function renderReport(report: SetImageReport, scanned: number): string {
  const lines = report.changed.map((c) => `changed   ${c.path}:${c.line}  ${c.field}  ${c.from} → ${c.to}`);
  for (const path of report.unchanged) lines.push(`current   ${path}`);
  const files = new Set(report.changed.map((c) => c.path)).size;
  lines.push(
    `${files} file${files === 1 ? '' : 's'} changed, ${report.unchanged.length} already current, ${report.refused.length} refused (${scanned} YAML file${scanned === 1 ? '' : 's'} scanned)`,
  );
  return `${lines.join('\n')}\n`;
}
