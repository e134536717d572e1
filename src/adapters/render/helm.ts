import { cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  checkChartYaml,
  checkValuesSchema,
  planRefusal,
  releaseTemplateArgs,
  type ChartReads,
  type RenderOutcome,
  type TargetNode,
} from '../../planners/diff/index.js';
import { renderWithTool, type ToolOutcome, type ToolRunOptions } from './exec.js';
import type { Overlay } from './isolation.js';
import type { Tools } from './tools.js';

export const HELM_MISSING =
  'helm is not installed where Escalator renders, so this chart was not rendered; install helm to see the objects. Shown instead: a structural diff of its values files.';

/** A DNS-1123 release name from the chart directory. */
function releaseName(dir: string): string {
  const base = dir
    .slice(dir.lastIndexOf('/') + 1)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+|-+$/g, '');
  return (base || 'release').slice(0, 53);
}

/** Refusals of a chart that need no tool run: dependencies outside the repository or remote and not vendored, values schemas that load URLs or files, unreadable chart files. */
export function refuseHelmChart(node: TargetNode, allowRemote = false): string | undefined {
  return planRefusal(node, allowRemote);
}

/** Chart archives are gzip'd tar files; more than this unpacked is not looked into (and refused). */
const MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;
const MAX_ARCHIVE_DEPTH = 4;

/** The regular files of a tar stream (ustar, GNU long names, pax `path`), by path. */
function tarFiles(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number): string =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    if (!Number.isFinite(size) || size < 0) throw new Error('a tar header with an unreadable size');
    const type = String.fromCharCode(header[156] ?? 0);
    const prefix = field(257, 6).startsWith('ustar') ? field(345, 155) : '';
    const body = tar.subarray(offset + 512, offset + 512 + size);
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    if (type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (type === 'x') {
      const path = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (path) longName = path[1];
    } else if (type === '0' || type === '\0') files.set(name.replace(/^\.\//, ''), body);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Check what a chart archive holds (its Chart.yaml dependencies and values schemas, nested archives too). */
function checkArchive(label: string, gzipped: Buffer, into: ChartReads, depth: number): void {
  if (depth > MAX_ARCHIVE_DEPTH) {
    into.unreadable.push(`${label} nests chart archives more than ${MAX_ARCHIVE_DEPTH} deep`);
    return;
  }
  let files: Map<string, Buffer>;
  try {
    files = tarFiles(gunzipSync(gzipped, { maxOutputLength: MAX_ARCHIVE_BYTES }));
  } catch {
    into.unreadable.push(`${label} is not a chart archive Escalator can open (gzip'd tar up to 64 MiB)`);
    return;
  }
  const paths = new Set(files.keys());
  for (const [path, content] of files) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const shownPath = `${label}:${path}`;
    const scoped: ChartReads = { remote: [], outside: [], unreadable: [], archives: [] };
    if (name === 'Chart.yaml') checkChartYaml(path, content.toString('utf8'), paths, scoped);
    else if (name === 'values.schema.json') checkValuesSchema(path, content.toString('utf8'), scoped);
    else if (/\.tgz$/i.test(name)) checkArchive(shownPath, content, into, depth + 1);
    const relabel = (reason: string): string => `${label}:${reason}`;
    into.remote.push(...scoped.remote.map(relabel));
    into.outside.push(...scoped.outside.map(relabel));
    into.unreadable.push(...scoped.unreadable.map(relabel));
  }
}

/**
 * Helm opens subchart archives (`charts/*.tgz`) the planner cannot look into; check what they
 * hold the same way before helm (or kustomize's helm) runs. Nothing to do without a checkout.
 */
export function refuseChartArchives(
  node: TargetNode,
  checkoutDir: string | undefined,
  allowRemote: boolean,
): string | undefined {
  if (!node.archives || node.archives.length === 0 || !checkoutDir) return undefined;
  const reads: ChartReads = { remote: [], outside: [], unreadable: [], archives: [] };
  for (const archive of node.archives) {
    let content: Buffer;
    try {
      content = readFileSync(join(checkoutDir, archive));
    } catch {
      continue; // not in the checkout (a link removed there): helm reads nothing from it
    }
    checkArchive(archive, content, reads, 1);
  }
  return planRefusal(
    { ...node, remote: reads.remote, plugins: [], outside: reads.outside, unreadable: reads.unreadable },
    allowRemote,
  );
}

/**
 * Symbolic links to folders among a target's inputs, on the way to them, or anywhere below its
 * input folders (chart directories: helm's loader follows links), when its graph was built
 * without knowing which paths are links: the tool would walk a folder the pre-check did not, so
 * it cannot tell what that folder makes the tool read. Links that left the checkout are already
 * gone from it (src/adapters/render/checkout.ts).
 */
export function unfollowedLinkedFolders(node: TargetNode, checkoutDir: string | undefined): string | undefined {
  if (node.linksFollowed || !checkoutDir) return undefined;
  const seen = new Map<string, boolean>();
  const linkedFolder = (path: string): boolean => {
    const known = seen.get(path);
    if (known !== undefined) return known;
    let result: boolean;
    try {
      result = lstatSync(join(checkoutDir, path)).isSymbolicLink() && statSync(join(checkoutDir, path)).isDirectory();
    } catch {
      result = false; // missing, or a dangling link: nothing is read through it
    }
    seen.set(path, result);
    return result;
  };
  const found = new Set<string>();
  for (const input of [...node.inputFiles, ...node.inputDirs, node.dir]) {
    const parts = input.split('/');
    for (let length = 1; length <= parts.length; length++) {
      const prefix = parts.slice(0, length).join('/');
      if (prefix !== '' && linkedFolder(prefix)) found.add(prefix);
    }
  }
  // helm loads a chart folder whole, and `helm dependency build` each file:// dependency's folder.
  const folders = node.kind === 'helm' ? [node.dir, ...(node.dependencyDirs ?? [])] : node.inputDirs;
  for (const folder of folders) {
    let entries: Array<{ name: string; parentPath: string; isSymbolicLink: () => boolean }>;
    try {
      entries = readdirSync(join(checkoutDir, folder), { recursive: true, withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.isSymbolicLink()) continue;
      const path = join(entry.parentPath, entry.name).slice(checkoutDir.length + 1);
      if (linkedFolder(path)) found.add(path);
    }
  }
  if (found.size === 0) return undefined;
  return `refused: Escalator cannot tell what this target reads (it reads through symbolic links to folders: ${[...found].sort().join(', ')}); link the files, not the folder, or list the folder itself`;
}

/**
 * Template functions whose output differs on every render (sprig: random strings, numbers, UUIDs,
 * keys and certificates, salted hashes, AES with a random IV). A chart that uses none of them
 * renders the same bytes every time (`now` aside: two renders a moment apart agree, so rendering
 * twice would not tell), so only such a chart is rendered twice.
 */
const RANDOM_FUNCTIONS =
  /\b(randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|uuidv4|shuffle|genPrivateKey|genCA|genCAWithKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey|htpasswd|bcrypt|encryptAES)\b/;
/** Past this much text the scan stops and the chart is rendered twice anyway. */
const MAX_SCANNED_BYTES = 64 * 1024 * 1024;

/**
 * Does anything helm reads for this target call a random function: the chart's files (templates,
 * helpers, values, subchart archives), its `file://` dependencies, the release's values files and
 * inline values (a value may be rendered with `tpl`)? When the scan cannot finish, it says yes:
 * rendering twice costs time, a missed random object costs a false change.
 */
export function usesTemplateRandomness(node: TargetNode, checkoutDir: string): boolean {
  let scanned = 0;
  const random = (text: string): boolean => RANDOM_FUNCTIONS.test(text);
  const fileIsRandom = (path: string): boolean => {
    let content: Buffer;
    try {
      const stat = lstatSync(path);
      if (!stat.isFile()) return false;
      scanned += stat.size;
      if (scanned > MAX_SCANNED_BYTES) return true;
      content = readFileSync(path);
    } catch {
      return false; // gone or unreadable: helm cannot read it either
    }
    if (/\.tgz$/i.test(path)) {
      try {
        const files = tarFiles(gunzipSync(content, { maxOutputLength: MAX_ARCHIVE_BYTES }));
        return [...files.values()].some((file) => random(file.toString('utf8')));
      } catch {
        return true;
      }
    }
    return random(content.toString('utf8'));
  };
  const dirIsRandom = (dir: string): boolean => {
    let entries: Array<{ name: string; parentPath: string; isFile: () => boolean }>;
    try {
      entries = readdirSync(join(checkoutDir, dir), { recursive: true, withFileTypes: true });
    } catch {
      return false;
    }
    return entries.some((entry) => entry.isFile() && fileIsRandom(join(entry.parentPath, entry.name)));
  };
  const release = node.release;
  return (
    dirIsRandom(node.dir) ||
    (node.dependencyDirs ?? []).some(dirIsRandom) ||
    [...(node.valuesFiles ?? []), ...(release?.valuesFiles ?? [])].some((file) =>
      fileIsRandom(join(checkoutDir, file)),
    ) ||
    (release?.inlineValues ?? []).some((values) => random(values.text))
  );
}

/**
 * A writable copy of the chart's folder for this render, when helm must write into it or read
 * something else there: `file://` dependencies `helm dependency build` puts under `charts/`, and
 * Flux `valuesFiles`, which replace the chart's values.yaml (an empty one here; the files come
 * first among the `--values`). The checkout itself stays read-only and shared.
 */
function chartOverlay(node: TargetNode, checkoutDir: string): { overlay: Overlay; scratch: string } | undefined {
  if ((node.buildDependencies?.length ?? 0) === 0 && node.release?.chartValuesReplaced !== true) return undefined;
  const scratch = mkdtempSync(join(tmpdir(), 'escalator-chart-'));
  try {
    const target = node.dir === '' ? checkoutDir : join(checkoutDir, node.dir);
    const copy = join(scratch, 'chart');
    cpSync(target, copy, { recursive: true, verbatimSymlinks: true });
    if (node.release?.chartValuesReplaced === true) {
      rmSync(join(copy, 'values.yaml'), { force: true });
      writeFileSync(join(copy, 'values.yaml'), '', { mode: 0o600 });
    }
    return { overlay: { target, source: copy }, scratch };
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/**
 * `helm template -f <values…> -- <release> <chart>` when helm is installed; otherwise a clear
 * "helm is not installed" outcome carrying the values files, which the planner diffs structurally.
 * A chart the pre-check refuses is not rendered either way.
 *
 * 1. refuse what the pre-check and the checkout show helm must not read
 * 2. a writable copy of the chart when helm writes into it or its values.yaml is replaced (Flux)
 * 3. `helm dependency build` for `file://` dependencies not vendored, in the sandbox
 * 4. `helm template`; twice when the chart uses random functions (the diff settles what differs)
 */
export async function renderHelmChart(
  node: TargetNode,
  checkoutDir: string | undefined,
  tools: Tools,
  valuesFiles: Array<{ path: string; text: string }>,
  options: ToolRunOptions,
): Promise<ToolOutcome> {
  const refusal =
    refuseHelmChart(node, options.allowRemote ?? false) ??
    unfollowedLinkedFolders(node, checkoutDir) ??
    refuseChartArchives(node, checkoutDir, options.allowRemote ?? false);
  if (refusal) return { outcome: { status: 'failed', message: refusal }, toolMs: 0, cacheable: true };
  if (!tools.helm || checkoutDir === undefined) {
    const outcome: RenderOutcome = { status: 'tool-missing', tool: 'helm', message: HELM_MISSING, values: valuesFiles };
    return { outcome, toolMs: 0, cacheable: false };
  }
  const helm = tools.helm;
  const chart = node.dir === '' ? '.' : `./${node.dir}`;
  const notes = [...(node.release?.notes ?? [])];
  const release = node.release;
  let prepared: ReturnType<typeof chartOverlay>;
  try {
    prepared = chartOverlay(node, checkoutDir);
  } catch (error) {
    const message = `not rendered: Escalator could not copy the chart to build its dependencies or replace its values (${(error as Error).message})`;
    return { outcome: { status: 'failed', message }, toolMs: 0, cacheable: false };
  }
  const overlays = prepared ? [prepared.overlay] : [];
  // Inline values (Argo CD values/valuesObject, Flux valuesFrom and values) become files in a
  // folder of their own, bound read-only into the sandbox beside the checkout.
  const inline =
    release && (release.inlineValues.length > 0 || release.chartValuesReplaced === true)
      ? mkdtempSync(join(tmpdir(), 'escalator-values-'))
      : undefined;
  let toolMs = 0;
  try {
    const dependencies = node.buildDependencies ?? [];
    if (dependencies.length > 0) {
      // As Argo CD does when helm reports a missing dependency (`helm dependency build`, which packages
      // each file:// dependency into charts/); Flux's source-controller adds the same charts when it
      // packages a chart directory. No network: a remote dependency is refused before this point.
      const built = await renderWithTool(
        'helm dependency build',
        helm.command,
        ['dependency', 'build', '--skip-refresh', '--', chart],
        checkoutDir,
        options,
        [],
        overlays,
      );
      toolMs += built.toolMs;
      if (built.outcome.status !== 'ok') {
        const message = built.outcome.status === 'failed' ? built.outcome.message : 'it did not run';
        return {
          outcome: {
            status: 'failed',
            message: `helm dependency build failed for ${dependencies.join(', ')}, which the agents build before they render: ${message}`,
          },
          toolMs,
          cacheable: built.cacheable,
        };
      }
      notes.push(
        `Its file:// dependencies were built first (helm dependency build), as the agents do: ${dependencies.join(', ')}.`,
      );
    }
    notes.push(renderedWith(helm.version));
    const valuesPath = (index: number): string => join(inline as string, `values-${index}.yaml`);
    // `--` ends helm's flags (cobra/pflag; helm 3.17 and 4.1 both take it): the release name and
    // the chart after it are positional whatever they look like (issue 31).
    let args: string[];
    const copied = new Map<string, string>();
    if (!release) {
      args = [
        'template',
        ...(node.valuesFiles ?? []).flatMap((file) => ['-f', `./${file}`]),
        '--',
        releaseName(node.dir),
        chart,
      ];
    } else {
      release.inlineValues.forEach((values, index) => writeFileSync(valuesPath(index), values.text, { mode: 0o600 }));
      // Flux reads valuesFiles from the source as they are, before the chart's values.yaml is
      // replaced: a values file inside the chart (its own values.yaml, listed first) is read from
      // a copy taken before, beside the inline values.
      const below = node.dir === '' ? '' : `${node.dir}/`;
      if (release.chartValuesReplaced)
        release.valuesFiles.forEach((file, index) => {
          if (!file.startsWith(below)) return;
          const copy = join(inline as string, `file-${index}.yaml`);
          try {
            writeFileSync(copy, readFileSync(join(checkoutDir, file)), { mode: 0o600 });
            copied.set(file, copy);
          } catch {
            // missing: helm names it as missing, as Flux would
          }
        });
      const filePath = (file: string): string => copied.get(file) ?? `./${file}`;
      args = ['template', ...releaseTemplateArgs(release, valuesPath, filePath), '--', release.releaseName, chart];
    }
    const template = async (): Promise<ToolOutcome> => {
      const result = await renderWithTool(
        'helm template',
        helm.command,
        args,
        checkoutDir,
        options,
        inline ? [inline] : [],
        overlays,
      );
      toolMs += result.toolMs;
      if (release && inline && result.outcome.status === 'failed') {
        // Name the inline values as the reader wrote them, not by a temporary path.
        let message = result.outcome.message;
        for (const [file, copy] of copied) message = message.split(copy).join(file);
        release.inlineValues.forEach((values, index) => {
          message = message.split(valuesPath(index)).join(`(${values.name})`);
        });
        result.outcome = { ...result.outcome, message: message.split(inline).join('(inline values)') };
      }
      return result;
    };
    const first = await template();
    if (first.outcome.status !== 'ok' || !usesTemplateRandomness(node, checkoutDir))
      return withNotes({ ...first, toolMs }, notes);
    // Template randomness: a second render of the same inputs tells what is random (issue 36).
    const second = await template();
    if (second.outcome.status !== 'ok') return { ...second, toolMs };
    return withNotes(
      {
        outcome: { ...first.outcome, again: second.outcome.yaml },
        toolMs,
        cacheable: first.cacheable && second.cacheable,
      },
      notes,
    );
  } finally {
    if (inline) rmSync(inline, { recursive: true, force: true });
    if (prepared) rmSync(prepared.scratch, { recursive: true, force: true });
  }
}

/** "Rendered with helm v3.17.3." from `helm version --short` (helm 3 and 4 render some charts differently). */
export function renderedWith(version: string): string {
  const match = /v\d+\.\d+\.\d+/.exec(version);
  return `Rendered with helm ${match ? match[0] : version.replace(/^helm /, '')}.`;
}

function withNotes(result: ToolOutcome, notes: string[]): ToolOutcome {
  if (result.outcome.status !== 'ok') return result;
  return { ...result, outcome: { ...result.outcome, notes: [...(result.outcome.notes ?? []), ...notes] } };
}
