import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  affectedTargets,
  buildReport,
  diffValuesFiles,
  discoverTargets,
  notRenderedDiff,
  planRefusal,
  stoppedDiff,
  targetReach,
  type DiffSide,
  type PlainSide,
  type DiffReport,
  type RenderOutcome,
  type TargetDiff,
  type TargetNode,
  type TreeView,
  valuesImageChanges,
  withAppOfAppsNote,
} from '../../planners/diff/index.js';
import { checkYamlInput } from '../../planners/yaml-guard.js';
import { materializeCheckout, type Checkout } from './checkout.js';
import { DiffStoppedError, DiffThreads } from './diff-threads.js';
import { renderHelmChart } from './helm.js';
import type { ToolOutcome, ToolRunOptions } from './exec.js';
import type { RenderIsolationMode } from './isolation.js';
import { renderKustomization } from './kustomize.js';
import { RenderCache } from './render-cache.js';
import { changedPathsBetween, type SourceTree } from './source-tree.js';
import { findTools, type ToolPaths, type Tools } from './tools.js';

/** How renders run. Every field has a safe default. */
export interface RenderOptions {
  /** Checkouts (by commit SHA) and renders (by target and inputs) live here. @default <tmpdir>/escalator-render */
  cacheDir?: string;
  /** Kill a kustomize/helm run after this long. @default 60000 */
  timeoutMs?: number;
  /** Kill a run whose output passes this. @default 64 MiB */
  maxOutputBytes?: number;
  /** Kill a run whose processes hold more memory than this together (Linux). @default 1 GiB */
  maxMemoryBytes?: number;
  /** Fetch remote kustomize resources. @default false */
  allowRemote?: boolean;
  /** Renders at once. @default 2 */
  concurrency?: number;
  /** Reuse renders from earlier runs. @default true */
  renderCache?: boolean;
  /** Where tools are looked up (and explicit binaries for tests). */
  tools?: ToolPaths;
  /** Render at most this many targets; the rest are listed in a note. @default 200 */
  maxTargets?: number;
  /**
   * How kustomize and helm are kept from the network and from every file outside their checkout
   * (src/adapters/render/isolation.ts). When the mode does not work on this machine, every
   * kustomize and helm target fails with one sentence saying so; nothing renders unisolated.
   * @default namespace
   */
  isolation?: RenderIsolationMode;
  /** Where `unshare` is; tests point it at a missing file to see the refusal. @default found on the system PATH */
  unshare?: string;
  /** The threads that diff rendered targets (time and heap limits). @default one pool per process */
  diffThreads?: DiffThreads;
}

let sharedDiffThreads: DiffThreads | undefined;

export interface RenderAndDiffInput {
  base: SourceTree;
  head: SourceTree;
  /** Changed paths (e.g. the pull request's files). `null`: compute them from the two trees. */
  changedPaths: string[] | null;
  /** Target patterns from the repository config (`diff.paths`); empty or absent: discover every target. */
  targets?: string[];
  options?: RenderOptions;
}

const KUSTOMIZATION = /(^|\/)(kustomization\.ya?ml|Kustomization)$/;
/** Files the pre-check reads besides kustomizations (helm dependencies and values schemas), loaded in the same batch. */
const PRECHECK_READS = /(^|\/)(Chart\.yaml|values\.schema\.json)$/;
const VALUES_FILE = /(^|\/)values[^/]*\.ya?ml$/;

function treeView(tree: SourceTree): TreeView {
  const files = tree.listFiles();
  return {
    sha: tree.sha,
    files,
    read: (path) => {
      try {
        return tree.read(path).toString('utf8');
      } catch {
        return undefined;
      }
    },
    // The pre-check follows symbolic links inside the repository only when it knows which paths are links.
    ...(tree.isSymlink ? { isSymlink: (path: string) => tree.isSymlink?.(path) ?? false } : {}),
  };
}

function filesOf(node: TargetNode, files: readonly string[]): string[] {
  const direct = new Set(node.inputFiles);
  return files.filter(
    (path) => direct.has(path) || node.inputDirs.some((dir) => dir === '' || path.startsWith(`${dir}/`)),
  );
}

const YAML_FILE = /\.ya?ml$/;

/**
 * The first YAML input of a render that is over Escalator's limits (src/planners/yaml-guard.ts):
 * kustomize and helm parse with no such limits, so an alias bomb or a huge file would hold a
 * render for its whole time limit and take as much memory as it likes. Checked before any tool runs.
 */
function hostileInput(node: TargetNode, view: TreeView): string | undefined {
  if (node.kind === 'plain') return undefined;
  // Values an agent gives inline (an Application's values, a ConfigMap's values.yaml) are YAML helm parses too.
  for (const values of node.release?.inlineValues ?? []) {
    const problem = checkYamlInput(values.text);
    if (problem) return `refused: ${node.release?.source ?? ''} ${values.name}: ${problem.reason}`;
  }
  for (const path of filesOf(node, view.files)) {
    if (!YAML_FILE.test(path) || path.includes('/templates/')) continue;
    const text = view.read(path);
    if (text === undefined) continue;
    const problem = checkYamlInput(text);
    if (problem) return `refused: ${path}: ${problem.reason}`;
  }
  return undefined;
}

/**
 * Why a target is named as not rendered before anything runs: a release whose chart (or values)
 * is not in the repository, a kustomization whose only remote references are `helmCharts` chart
 * repositories, or a chart whose only remote references are dependencies from chart repositories
 * that are not vendored (Argo CD and Flux fetch them; Escalator fetches nothing while rendering a
 * pull request). Every other remote reference stays a refusal (src/planners/diff/refusal.ts).
 */
function skipReason(node: TargetNode, allowRemote: boolean): string | undefined {
  // Values bound for helm's command line that are not what helm expects are refused, not skipped.
  if ((node.arguments?.length ?? 0) > 0) return undefined;
  if (node.release?.skip !== undefined) return node.release.skip;
  const charts = node.kind === 'kustomize' ? (node.remoteCharts ?? []) : [];
  const dependencies = node.remoteDependencies ?? [];
  if (
    allowRemote ||
    charts.length + dependencies.length === 0 ||
    node.remote.some((entry) => !charts.includes(entry) && !dependencies.includes(entry)) ||
    node.plugins.length > 0 ||
    (node.outside?.length ?? 0) > 0 ||
    (node.unreadable?.length ?? 0) > 0 ||
    (node.linksOut?.length ?? 0) > 0
  )
    return undefined;
  const why: string[] = [];
  if (charts.length > 0) why.push(`its helmCharts come from remote chart repositories (${charts.join(', ')})`);
  if (dependencies.length > 0)
    why.push(`its chart depends on charts from chart repositories that are not vendored (${dependencies.join('; ')})`);
  const vendor =
    dependencies.length > 0 ? '; run helm dependency build and commit the charts/ folder to have it rendered' : '';
  return `${why.join(', and ')}; charts from remote repositories are never fetched while rendering a pull request${vendor}`;
}

async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * Render the targets a change touches at base and head and diff them per object.
 *
 * 1. list both trees and build each one's target graph (kustomization files are read in one batch)
 * 2. pick the targets the changed paths touch (union of both graphs; unsure targets near unplaced files)
 * 3. per target and side: render cache → else materialize the commit (cached by SHA) → render
 * 4. diff each target in a diff thread (time and heap limits); one failing or stopped target never
 *    stops the others; errors are scrubbed of secrets
 * 5. assemble the report (sorted, deterministic) with run statistics on the side
 */
export async function renderAndDiff(input: RenderAndDiffInput): Promise<DiffReport> {
  const started = performance.now();
  const options = input.options ?? {};
  const cacheRoot = options.cacheDir ?? join(tmpdir(), 'escalator-render');
  mkdirSync(cacheRoot, { recursive: true, mode: 0o700 });
  const tools: Tools = findTools(options.tools);
  const isolation = options.isolation ?? 'namespace';
  const run: ToolRunOptions = {
    timeoutMs: options.timeoutMs ?? 60_000,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024 * 1024,
    maxMemoryBytes: options.maxMemoryBytes ?? 1024 * 1024 * 1024,
    home: join(cacheRoot, 'home'),
    path: options.tools?.path ?? process.env.PATH,
    allowRemote: options.allowRemote ?? false,
    isolation: {
      mode: isolation,
      binaries: [tools.kustomize?.command, tools.helm?.command].filter(
        (binary): binary is string => binary !== undefined,
      ),
      ...(options.unshare ? { unshare: options.unshare } : {}),
    },
  };
  const cache = options.renderCache === false ? undefined : new RenderCache(cacheRoot);
  const stats = { toolMs: 0, checkoutMs: 0, renders: 0, checkoutsMaterialized: 0 };

  const views = new Map<SourceTree, TreeView>([
    [input.base, treeView(input.base)],
    [input.head, treeView(input.head)],
  ]);
  // Kustomizations and chart files, and the YAML files discovery looks through for what GitOps
  // agents deploy (Argo CD Applications, Flux Kustomizations and HelmReleases), in one batch.
  for (const [tree, view] of views)
    tree.preload?.(
      view.files.filter(
        (path) =>
          KUSTOMIZATION.test(path) ||
          PRECHECK_READS.test(path) ||
          (YAML_FILE.test(path) && !path.includes('/templates/')),
      ),
    );
  const discover = { ...(input.targets && input.targets.length > 0 ? { paths: input.targets } : {}) };
  const baseNodes = discoverTargets(views.get(input.base) as TreeView, discover);
  const headNodes = discoverTargets(views.get(input.head) as TreeView, discover);
  const changed =
    input.changedPaths ??
    (input.base.blobSha && input.head.blobSha ? changedPathsBetween(input.base, input.head) : null);
  const affected = affectedTargets(baseNodes, headNodes, changed);
  const notes: string[] = [];
  // Every changed file no target reads is named, whatever its type (a Jsonnet file Argo CD renders, a script):
  // the comment never lets a reviewer think a change was looked at when it was not.
  const unplacedFiles = affected.unplaced.filter((path) => !path.startsWith('.github/'));
  if (unplacedFiles.length > 0) {
    const shown = unplacedFiles.slice(0, 10).join(', ');
    notes.push(
      `Changed files no target reads: ${shown}${unplacedFiles.length > 10 ? ` and ${unplacedFiles.length - 10} more` : ''}.`,
    );
  }
  if (unplacedFiles.some((path) => /\.(jsonnet|libsonnet)$/i.test(path)))
    notes.push(
      'Escalator does not render Jsonnet (Argo CD renders directories of .jsonnet files): what those files change is not shown.',
    );
  const maxTargets = options.maxTargets ?? 200;

  const checkouts = new Map<string, Promise<Checkout>>();
  const checkout = (tree: SourceTree): Promise<Checkout> => {
    let pending = checkouts.get(tree.sha);
    if (!pending) {
      const begun = performance.now();
      pending = materializeCheckout(tree, cacheRoot).then((result) => {
        stats.checkoutMs += performance.now() - begun;
        if (result.materialized) stats.checkoutsMaterialized++;
        return result;
      });
      checkouts.set(tree.sha, pending);
    }
    return pending;
  };

  const valuesFor = (tree: SourceTree, node: TargetNode): Array<{ path: string; text: string }> => {
    const view = views.get(tree) as TreeView;
    const chartValues =
      node.kind === 'helm'
        ? [
            // Flux valuesFiles replace the chart's values.yaml (src/planners/diff/helm-releases.ts).
            ...(node.release?.chartValuesReplaced ? [] : [node.dir === '' ? 'values.yaml' : `${node.dir}/values.yaml`]),
            ...(node.valuesFiles ?? []),
            ...(node.release?.valuesFiles ?? []),
          ]
        : [];
    const kustomizeValues =
      node.kind === 'kustomize'
        ? filesOf(node, view.files).filter((path) => KUSTOMIZATION.test(path) || VALUES_FILE.test(path))
        : [];
    return [...new Set([...chartValues, ...kustomizeValues])].sort().flatMap((path) => {
      const text = view.read(path);
      return text === undefined ? [] : [{ path, text }];
    });
  };

  /**
   * The values of a Helm target that is not rendered, in the order helm would take them: the
   * chart's values.yaml when the chart is in the repository, its values files, then the values
   * its agent gives inline (named by the file and field that hold them). A file over the YAML
   * limits is left out.
   */
  const releaseValues = (tree: SourceTree, node: TargetNode | undefined): Array<{ path: string; text: string }> => {
    if (!node || node.kind !== 'helm') return [];
    const view = views.get(tree) as TreeView;
    const local = node.release === undefined || node.release.chart !== undefined;
    const paths = [
      ...(local ? [node.dir === '' ? 'values.yaml' : `${node.dir}/values.yaml`] : []),
      ...(node.valuesFiles ?? []),
      ...(node.release?.valuesFiles ?? []),
    ];
    const files = [...new Set(paths)].flatMap((path) => {
      const text = view.read(path);
      return text === undefined ? [] : [{ path, text }];
    });
    for (const values of node.release?.inlineValues ?? [])
      files.push({ path: `${node.release?.source ?? ''} ${values.name}`, text: values.text });
    return files.filter((file) => checkYamlInput(file.text) === undefined);
  };

  const renderSide = async (tree: SourceTree, node: TargetNode | undefined): Promise<RenderOutcome | PlainSide> => {
    if (!node) return { status: 'absent' };
    const view = views.get(tree) as TreeView;
    if (node.kind === 'plain') {
      // Read here, rendered (parsed) in the diff thread.
      const symlinks = node.inputFiles.filter((path) => tree.isSymlink?.(path));
      const files: Record<string, string> = {};
      for (const path of node.inputFiles) {
        const text = symlinks.includes(path) ? undefined : view.read(path);
        if (text !== undefined) files[path] = text;
      }
      return { status: 'plain', node, files, symlinks };
    }
    const helmNeeded = node.kind === 'helm' || node.needsHelm === true;
    if (helmNeeded && !tools.helm)
      return (await renderHelmChart(node, undefined, tools, valuesFor(tree, node), run)).outcome;
    const tool =
      node.kind === 'helm'
        ? (tools.helm?.version ?? '')
        : `${tools.kustomize?.version ?? 'none'}${node.needsHelm ? ` + ${tools.helm?.version}` : ''}`;
    const key = cache
      ? RenderCache.key(node, tree, tool, {
          allowRemote: run.allowRemote,
          maxOutputBytes: run.maxOutputBytes,
          maxMemoryBytes: run.maxMemoryBytes,
          isolation,
        })
      : undefined;
    const cached = key ? cache?.get(key) : undefined;
    if (cached) return cached;
    let result: ToolOutcome;
    const hostile = hostileInput(node, view);
    if (hostile) {
      result = { outcome: { status: 'failed', message: hostile }, toolMs: 0, cacheable: true };
    } else if ((node.arguments?.length ?? 0) > 0) {
      // Refused before any checkout (src/planners/diff/refusal.ts says why, with files and lines).
      const message = planRefusal(node, run.allowRemote ?? false) as string;
      result = { outcome: { status: 'failed', message }, toolMs: 0, cacheable: true };
    } else if (
      node.kind === 'kustomize' &&
      (node.plugins.length > 0 ||
        (node.outside?.length ?? 0) > 0 ||
        (node.unreadable?.length ?? 0) > 0 ||
        (node.linksOut?.length ?? 0) > 0 ||
        (node.remote.length > 0 && !run.allowRemote))
    ) {
      result = await renderKustomization(node, '', tools, [], run); // refused before any checkout
    } else {
      const { dir, refusedSymlinks } = await checkout(tree);
      result =
        node.kind === 'helm'
          ? await renderHelmChart(node, dir, tools, [], run)
          : await renderKustomization(node, dir, tools, refusedSymlinks, run);
    }
    stats.renders++;
    stats.toolMs += result.toolMs;
    if (key && result.cacheable) cache?.set(key, result.outcome);
    return result.outcome;
  };

  /**
   * Every file the target reads, whose secret-looking values are scrubbed from this side's messages:
   * YAML and kustomizations, and the env and key files their `secretGenerator`s name (read here,
   * parsed in the diff thread).
   */
  const sourcesOf = (tree: SourceTree, node: TargetNode | undefined): DiffSide['sources'] => {
    if (!node) return [];
    const view = views.get(tree) as TreeView;
    return filesOf(node, view.files).flatMap((path) => {
      const text = view.read(path);
      return text === undefined ? [] : [{ path, text }];
    });
  };

  const work = affected.targets.slice(0, maxTargets);
  const threads = options.diffThreads ?? (sharedDiffThreads ??= new DiffThreads());
  const diffs = await pool(work, options.concurrency ?? 2, async ({ base, head }): Promise<TargetDiff | undefined> => {
    // A release whose chart (or values) Escalator does not fetch is named with the reason; nothing runs.
    const skip = skipReason(head ?? (base as TargetNode), run.allowRemote ?? false);
    if (skip !== undefined) {
      const diff = notRenderedDiff((head ?? base) as TargetNode, !base ? 'added' : !head ? 'removed' : 'both', skip);
      // What its values say still shows: a structural diff of them, and a row per image they change.
      const [before, after] = [releaseValues(input.base, base), releaseValues(input.head, head)];
      const values = diffValuesFiles(before, after);
      if (values.length > 0) diff.values = values;
      diff.images = valuesImageChanges(diff.id, before, after, { inOrder: true });
      return diff;
    }
    const [baseOutcome, headOutcome] = [await renderSide(input.base, base), await renderSide(input.head, head)];
    const target = (head ?? base) as TargetNode;
    let diff: TargetDiff;
    try {
      diff = await threads.diff(
        target,
        { outcome: baseOutcome, sources: sourcesOf(input.base, base) },
        { outcome: headOutcome, sources: sourcesOf(input.head, head) },
      );
    } catch (error) {
      if (!(error instanceof DiffStoppedError)) throw error;
      diff = stoppedDiff(target, !base ? 'added' : !head ? 'removed' : 'both', error.message);
    }
    // A directory of YAML that holds no Kubernetes object on either side (or no YAML at all) is not a target.
    if (target.kind === 'plain' && diff.status === 'unchanged' && diff.counts.unchanged === 0) return undefined;
    return withAppOfAppsNote(diff);
  });

  // Targets past the cap are not rendered: named in the comment's headline, never counted as unchanged.
  const skipped = affected.targets
    .slice(maxTargets)
    .map(({ base, head }) =>
      notRenderedDiff(
        (head ?? base) as TargetNode,
        !base ? 'added' : !head ? 'removed' : 'both',
        `over the limit of ${maxTargets} targets per run; ${affected.targets.length} are affected`,
      ),
    );
  // Where each affected target lives and what reaches it: which environments a change reaches at once.
  const reach =
    changed === null
      ? undefined
      : affected.targets.map(({ base, head, reads }) => targetReach((head ?? base) as TargetNode, reads ?? []));
  const report = buildReport({
    baseSha: input.base.sha,
    headSha: input.head.sha,
    targets: [...diffs.filter((diff): diff is TargetDiff => diff !== undefined), ...skipped],
    notes,
    ...(reach ? { reach } : {}),
  });
  report.stats = {
    totalMs: performance.now() - started,
    toolMs: stats.toolMs,
    checkoutMs: stats.checkoutMs,
    renders: stats.renders,
    renderCacheHits: cache?.hits ?? 0,
    checkoutsMaterialized: stats.checkoutsMaterialized,
  };
  return report;
}
