import { compilePathPattern } from '../path-pattern.js';
import { checkChart, fileDependencies, type ChartReads, type ChartTree } from './chart-reads.js';
import {
  fileSourcePaths,
  foldKey,
  isInlinePatch,
  isRemoteReference,
  kustomizationFile,
  readKustomization,
  readPluginConfigPaths,
  readYamlMappings,
  type FieldRef,
} from '../kustomize/index.js';
import { shown } from './shown.js';
import { readHelmReleases, type HelmRelease } from './helm-releases.js';
import { fieldLine, refuseArguments } from './arguments.js';
import { dirname, resolvePath } from '../repo-path.js';
import type { TargetNode } from './types.js';

export { resolvePath };

/**
 * Which targets a repository has, what each one reads, and which of them a change touches.
 *
 * - Kustomize: every kustomization directory that no other kustomization references (overlays and
 *   stand-alone bases), except Components. Its inputs follow `resources`, `bases`, `components`,
 *   `patches*`, `configMapGenerator`/`secretGenerator` files, `helmCharts` values and chart
 *   directories, `replacements`, `crds`, `configurations`, `openapi`, `generators`, `transformers`
 *   and `validators`, recursively.
 * - Helm: every chart directory (`Chart.yaml`) that is not a subchart or inflated by a
 *   kustomization; one target per `values-*.yaml` / `values.*.yaml` file beside `values.yaml`,
 *   or one target with the chart's defaults when there is none.
 * - Plain: every other directory holding `.yaml`/`.yml` files (not `.github/` or hidden folders);
 *   documents without `apiVersion` and `kind` are ignored, and a directory with no object at base
 *   or head is dropped from the report.
 *
 * With configured paths (`diff.paths`) only the matched directories and files are targets, each
 * classified by what it holds.
 */
export interface TreeView {
  /** The commit this tree is (Argo CD's `$ARGOCD_APP_REVISION` in Helm parameters); optional. */
  sha?: string;
  files: readonly string[];
  /** A file's text, or undefined when it is missing or not text. A symbolic link's text is its target. */
  read: (path: string) => string | undefined;
  /**
   * Is the path a symbolic link? With it the graph follows links (a folder linked into an
   * overlay is walked like the folder); without it links are not followed, and the adapter
   * refuses a kustomization that reads through a linked folder.
   */
  isSymlink?: (path: string) => boolean;
}

export interface DiscoverOptions {
  /** Target patterns (`apps/*\/overlays/prod`); empty or absent: discover every target. */
  paths?: readonly string[];
}

export { isRemoteReference, kustomizationFile };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Index {
  files: Set<string>;
  dirs: Set<string>;
  /** Files below each directory, computed on demand. */
  below: (dir: string) => string[];
  read: (path: string) => string | undefined;
  isSymlink?: (path: string) => boolean;
  sorted: string[];
}

function buildIndex(tree: TreeView): Index {
  const files = new Set(tree.files);
  const dirs = new Set<string>(['']);
  for (const file of files) {
    let dir = dirname(file);
    while (!dirs.has(dir)) {
      dirs.add(dir);
      dir = dirname(dir);
    }
  }
  const sorted = [...files].sort(compare);
  const below = (dir: string): string[] => (dir === '' ? sorted : sorted.filter((file) => file.startsWith(`${dir}/`)));
  return { files, dirs, below, read: tree.read, sorted, ...(tree.isSymlink ? { isSymlink: tree.isSymlink } : {}) };
}

interface KustomizeWalk {
  files: Set<string>;
  dirs: Set<string>;
  unsure: string[];
  remote: string[];
  /** The remote entries that are `helmCharts` chart repositories. */
  remoteCharts: string[];
  /** The remote entries that are dependencies of a local chart, from a chart repository and not vendored. */
  remoteDependencies: string[];
  plugins: string[];
  /** References that leave the repository (`../` past the root, absolute paths, symbolic links out). */
  outside: string[];
  /** Files the pre-check cannot read as kustomize does: the target is refused. */
  unreadable: string[];
  /** Values kustomize would pass to helm that are not what helm expects (src/planners/diff/arguments.ts): the target is refused. */
  arguments: string[];
  /** Symbolic links on the way that lead out of the repository (the checkout removes them; the target is refused). */
  linksOut: string[];
  archives: string[];
  needsHelm: boolean;
  /** Kustomization directories reached (including the root). */
  visited: Set<string>;
}

/** A generator/transformer configuration that would run a plugin rather than a built-in. */
function pluginReason(config: unknown): string | undefined {
  if (!isRecord(config)) return undefined;
  const metadata = isRecord(config.metadata) ? config.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  if ('config.kubernetes.io/function' in annotations || 'config.k8s.io/function' in annotations)
    return 'declares a KRM function (exec or container plugin)';
  if (typeof config.apiVersion === 'string' && config.apiVersion !== 'builtin' && typeof config.kind === 'string')
    return `uses the non-builtin plugin ${config.apiVersion}/${config.kind}`;
  return undefined;
}

/** How a reference is read: a resource (file, kustomization directory or clone), a plugin configuration, one file, a directory helm uses. */
type Reach = 'resource' | 'plugin' | 'file' | 'home';

/** Generator `files` entries are `[key=]path`. */
const FILE_SOURCE = /(^|\.)files\[\d+\]$/;

function walkKustomization(index: Index, dir: string, walk: KustomizeWalk, pluginContext: boolean): void {
  if (walk.visited.has(dir)) return;
  walk.visited.add(dir);
  const file = kustomizationFile(index.files, dir);
  if (!file) {
    walk.unsure.push(`${dir || '.'} has no kustomization file`);
    walk.dirs.add(dir);
    return;
  }
  walk.files.add(file);
  const text = readFollowing(index, file, walk);
  const read = text === undefined ? ({ ok: false, problem: ' cannot be read' } as const) : readKustomization(text);
  if (!read.ok) {
    walk.unsure.push(`${file} does not parse as a YAML mapping`);
    walk.unreadable.push(`${file}${read.problem}`);
    walk.dirs.add(dir);
    return;
  }
  const reads = read.value;
  /** A field of this kustomization as refusals name it: file, line and field. */
  const where = (ref: FieldRef): string => `${file} line ${fieldLine(text ?? '', ref.field, ref.value)} ${ref.field}`;

  /** Where a reference lands once symbolic links are followed, or nothing (refused) when it leaves the repository. */
  const land = (ref: FieldRef, value: string, how: Reach): string | undefined => {
    const said =
      how === 'resource'
        ? `${file} line ${fieldLine(text ?? '', ref.field, ref.value)} reads ${shown(ref.value)}`
        : `${where(ref)} reads ${shown(ref.value)}`;
    const path = resolvePath(dir, value);
    if (path === undefined) {
      walk.unsure.push(`${file} references ${ref.value} outside the repository`);
      walk.outside.push(said);
      return undefined;
    }
    const followed = followLinks(index, path);
    for (const link of followed.links) walk.files.add(link);
    if (followed.escapes !== undefined) {
      walk.linksOut.push(followed.escapes);
      return undefined;
    }
    return followed.path;
  };

  const addFile = (ref: FieldRef, how: Reach, checkPlugin: boolean): void => {
    const candidates = FILE_SOURCE.test(foldKey(ref.field)) ? fileSourcePaths(ref.value) : [ref.value];
    if (candidates.some(isRemoteReference)) {
      walk.remote.push(
        how === 'resource' || how === 'plugin' ? shown(ref.value) : `${where(ref)}: ${shown(ref.value)}`,
      );
      return;
    }
    // kustomize reads `key=path` as path, a bare entry as itself; every split must stay inside.
    const landed = candidates.map((candidate) => land(ref, candidate, how));
    if (landed.some((path) => path === undefined)) return;
    const path = landed[candidates.length === 2 ? 1 : 0] as string;
    if (how === 'home') {
      walk.dirs.add(path);
      return;
    }
    if (index.files.has(path)) {
      walk.files.add(path);
      if (checkPlugin) checkPluginConfigFile(path);
    } else if (index.dirs.has(path)) {
      walk.unsure.push(`${file} references the directory ${ref.value} where a file is expected`);
      walk.dirs.add(path);
    } else {
      // Missing: kustomize will fail; a later commit adding it must still count as a change.
      walk.files.add(path);
      walk.unsure.push(`${file} references ${ref.value}, which does not exist`);
    }
  };

  /** The builtin fields of plugin configurations that name files (a PatchTransformer's `path`…). */
  /** `source`: the file the configuration is written in, its text, and the field that holds it when it is inline. */
  const checkPluginConfig = (
    config: Record<string, unknown>,
    label: string,
    source: { file: string; text: string | undefined; within?: string },
  ): void => {
    const reason = pluginReason(config);
    if (reason) walk.plugins.push(`${label} ${reason}`);
    const paths = readPluginConfigPaths(config);
    if (!paths.ok) {
      walk.unreadable.push(`${label}${paths.problem}`);
      return;
    }
    for (const chart of paths.value.charts)
      walk.arguments.push(...refuseArguments(source.file, source.text, chart.arguments, source.within));
    for (const ref of paths.value.remote)
      if (ref.value.trim() !== '') walk.remote.push(`${label} ${ref.field}: ${shown(ref.value)}`);
    const named = (ref: FieldRef, how: Reach): void => {
      const candidates = FILE_SOURCE.test(foldKey(ref.field)) ? fileSourcePaths(ref.value) : [ref.value];
      if (candidates.some(isRemoteReference)) {
        walk.remote.push(`${label} ${ref.field}: ${shown(ref.value)}`);
        return;
      }
      for (const candidate of candidates) {
        const path = resolvePath(dir, candidate);
        const followed = path === undefined ? undefined : followLinks(index, path);
        if (followed?.escapes !== undefined) walk.linksOut.push(followed.escapes);
        else if (path === undefined) walk.outside.push(`${label} ${ref.field} reads ${shown(ref.value)}`);
        else if (how === 'home') walk.dirs.add(followed?.path ?? path);
        else walk.files.add(followed?.path ?? path);
      }
    };
    for (const ref of paths.value.files) named(ref, 'file');
    for (const ref of paths.value.homes) named(ref, 'home');
    for (const chart of paths.value.charts)
      if (chart.name)
        named(
          {
            field: chart.name.field || 'name',
            value: `${paths.value.homes[0]?.value ?? 'charts'}/${chart.name.value}`,
          },
          'home',
        );
  };

  const checkPluginConfigFile = (path: string): void => {
    const content = readFollowing(index, path, walk);
    if (content === undefined) return;
    const docs = readYamlMappings(content);
    if (!docs.ok) {
      walk.unreadable.push(`${path}${docs.problem}`);
      return;
    }
    for (const doc of docs.value) checkPluginConfig(doc, path, { file: path, text: content });
  };

  const addResource = (ref: FieldRef, inPluginContext: boolean, how: Reach): void => {
    if (isRemoteReference(ref.value)) {
      walk.remote.push(shown(ref.value));
      return;
    }
    const path = land(ref, ref.value, how);
    if (path === undefined) return;
    if (index.dirs.has(path) && !index.files.has(path)) walkKustomization(index, path, walk, inPluginContext);
    else addFile({ field: ref.field, value: ref.value }, how, inPluginContext);
  };

  for (const ref of reads.resources) addResource(ref, pluginContext, 'resource');
  for (const ref of reads.plugins) {
    if (ref.value.includes('\n')) {
      const docs = readYamlMappings(ref.value);
      if (!docs.ok) walk.unreadable.push(`${file} ${ref.field}${docs.problem}`);
      else
        for (const doc of docs.value) checkPluginConfig(doc, `${file} ${ref.field}`, { file, text, within: ref.field });
      continue;
    }
    addResource(ref, true, 'plugin');
  }
  for (const ref of reads.files) addFile(ref, 'file', false);
  for (const ref of reads.strategicMerge) {
    if (isInlinePatch(ref.value)) continue;
    addFile(ref, 'file', false);
  }
  for (const ref of reads.homes) {
    if (isRemoteReference(ref.value)) walk.outside.push(`${where(ref)} reads ${shown(ref.value)}`);
    else addFile(ref, 'home', false);
  }
  for (const chart of reads.charts) walk.arguments.push(...refuseArguments(file, text, chart.arguments));
  if (reads.charts.length > 0) {
    walk.needsHelm = true;
    const home = reads.chartHome?.value ?? 'charts';
    const homeRef = reads.chartHome ?? { field: 'helmGlobals.chartHome', value: home };
    const homePath = isRemoteReference(home) ? undefined : land(homeRef, home, 'home');
    if (homePath === undefined && isRemoteReference(home)) walk.outside.push(`${where(homeRef)} reads ${shown(home)}`);
    for (const chart of reads.charts) {
      if (homePath === undefined) break;
      const name = chart.name?.value;
      if (!name || !chart.name) continue;
      const chartPath = land(chart.name, `${home}/${name}`, 'home');
      if (chartPath === undefined) continue;
      const candidates = [chartPath];
      if (chart.version) {
        const versioned = land(chart.version, `${home}/${name}-${chart.version.value}/${name}`, 'home');
        if (versioned === undefined) continue;
        candidates.push(versioned);
      }
      const local = candidates.filter((candidate) => index.dirs.has(candidate));
      for (const chartDir of local) {
        walk.dirs.add(chartDir);
        const reads0: ChartReads = {
          remote: walk.remote,
          outside: walk.outside,
          unreadable: walk.unreadable,
          archives: walk.archives,
          dependencies: walk.remoteDependencies,
        };
        checkChart(
          chartDir,
          chartTree(index, (path) => readFollowing(index, path, walk)),
          reads0,
        );
      }
      if (local.length === 0) {
        if (chart.repo && chart.repo.value !== '') {
          walk.remote.push(`${shown(chart.repo.value)} (chart ${shown(name)})`);
          walk.remoteCharts.push(`${shown(chart.repo.value)} (chart ${shown(name)})`);
        } else walk.unsure.push(`${file} inflates the chart ${name}, which is not in ${home}/`);
        walk.dirs.add(homePath);
      }
    }
  }
}

/** The tree as `checkChart` reads it: links followed, linked folders walked like the folder. */
function chartTree(index: Index, read: (path: string) => string | undefined): ChartTree {
  return {
    files: index.sorted,
    read,
    linkedFolder: (path) => {
      if (!index.isSymlink?.(path)) return undefined;
      const followed = followLinks(index, path);
      return followed.escapes === undefined && index.dirs.has(followed.path) && !index.files.has(followed.path)
        ? followed.path
        : undefined;
    },
  };
}

/** A file's text, read through symbolic links the way the tool would; a link that leaves the repository is refused. */
function readFollowing(index: Index, path: string, walk: KustomizeWalk): string | undefined {
  const followed = followLinks(index, path);
  if (followed.escapes !== undefined) {
    walk.linksOut.push(followed.escapes);
    return undefined;
  }
  for (const link of followed.links) walk.files.add(link);
  return index.read(followed.path);
}

/**
 * Resolve symbolic links component by component (kustomize cleans a path lexically first, as
 * `resolvePath` does, then the system follows links). Without link information the path is
 * taken as it is.
 */
export function followLinks(
  index: { isSymlink?: (path: string) => boolean; read: (path: string) => string | undefined },
  path: string,
): { path: string; links: string[]; escapes?: string } {
  const isSymlink = index.isSymlink;
  if (!isSymlink || path === '') return { path, links: [] };
  const links: string[] = [];
  let rest = path.split('/');
  let done: string[] = [];
  for (let hops = 0; rest.length > 0;) {
    done.push(rest.shift() as string);
    const current = done.join('/');
    if (!isSymlink(current)) continue;
    links.push(current);
    const target = resolvePath(dirname(current), (index.read(current) ?? '').trim());
    if (target === undefined || ++hops > 40) return { path, links, escapes: current };
    rest = [...(target === '' ? [] : target.split('/')), ...rest];
    done = [];
  }
  return { path: done.join('/'), links };
}

function kustomizeNode(index: Index, dir: string): TargetNode {
  const walk: KustomizeWalk = {
    files: new Set(),
    dirs: new Set(),
    unsure: [],
    remote: [],
    remoteCharts: [],
    remoteDependencies: [],
    plugins: [],
    outside: [],
    unreadable: [],
    arguments: [],
    linksOut: [],
    archives: [],
    needsHelm: false,
    visited: new Set(),
  };
  walkKustomization(index, dir, walk, false);
  const node: TargetNode = {
    id: dir || '.',
    kind: 'kustomize',
    dir,
    inputFiles: [...walk.files].sort(compare),
    inputDirs: [...walk.dirs].sort(compare),
    unsure: walk.unsure,
    remote: walk.remote,
    plugins: walk.plugins,
  };
  if (walk.needsHelm) node.needsHelm = true;
  if (walk.remoteCharts.length > 0) node.remoteCharts = walk.remoteCharts;
  if (walk.remoteDependencies.length > 0) node.remoteDependencies = [...new Set(walk.remoteDependencies)];
  if (walk.outside.length > 0) node.outside = walk.outside;
  if (walk.unreadable.length > 0) node.unreadable = walk.unreadable;
  if (walk.arguments.length > 0) node.arguments = [...new Set(walk.arguments)];
  if (walk.linksOut.length > 0) node.linksOut = [...new Set(walk.linksOut)].sort(compare);
  if (walk.archives.length > 0) node.archives = [...new Set(walk.archives)].sort(compare);
  if (index.isSymlink) node.linksFollowed = true;
  return node;
}

/** Kustomization directories another kustomization references (as resource, base, component, generator…). */
function referencedKustomizations(index: Index, dirs: string[]): { referenced: Set<string>; components: Set<string> } {
  const referenced = new Set<string>();
  const components = new Set<string>();
  for (const dir of dirs) {
    const file = kustomizationFile(index.files, dir) as string;
    const followed = followLinks(index, file);
    const text = followed.escapes === undefined ? index.read(followed.path) : undefined;
    const read = text === undefined ? undefined : readKustomization(text);
    if (!read?.ok) continue;
    if (read.value.isComponent) components.add(dir);
    for (const ref of [...read.value.resources, ...read.value.plugins]) {
      const path = resolvePath(dir, ref.value);
      if (path === undefined) continue;
      const real = followLinks(index, path);
      if (real.escapes === undefined && real.path !== dir && kustomizationFile(index.files, real.path))
        referenced.add(real.path);
    }
  }
  return { referenced, components };
}

/**
 * Which files kustomize or an agent reads as whole objects: a file a kustomization lists as a
 * resource, or one outside every kustomization's directory that no kustomization reads another way.
 * A kustomize patch (`patches[].path`, `patchesStrategicMerge`) is a partial object: a HelmRelease
 * in it (flux2-kustomize-helm-example `apps/staging/podinfo-values.yaml`, referenced from
 * `patches:` with `target: kind: HelmRelease`) is merged into the release of a base, and is no
 * release of its own. The same holds for the generator, CRD and configuration files a
 * kustomization reads, and for files beside a kustomization that it does not list (kustomize and
 * the agents build the kustomization, not the folder).
 */
function wholeObjectFiles(index: Index, kustomizeDirs: readonly string[]): (file: string) => boolean {
  const resources = new Set<string>();
  const partial = new Set<string>();
  for (const dir of kustomizeDirs) {
    const file = kustomizationFile(index.files, dir) as string;
    const followed = followLinks(index, file);
    const text = followed.escapes === undefined ? index.read(followed.path) : undefined;
    const read = text === undefined ? undefined : readKustomization(text);
    if (!read?.ok) continue;
    const land = (value: string): string | undefined => {
      const path = resolvePath(dir, value.trim());
      const real = path === undefined ? undefined : followLinks(index, path);
      return real === undefined || real.escapes !== undefined || !index.files.has(real.path) ? undefined : real.path;
    };
    for (const ref of read.value.resources) {
      const path = land(ref.value);
      if (path !== undefined) resources.add(path);
    }
    for (const ref of [...read.value.files, ...read.value.strategicMerge]) {
      if (ref.value.includes('\n')) continue; // an inline patch
      const path = land(ref.value);
      if (path !== undefined) partial.add(path);
    }
  }
  const besideKustomization = new Set(kustomizeDirs);
  return (file) => resources.has(file) || (!partial.has(file) && !besideKustomization.has(dirname(file)));
}

const DEPLOYER_HINT = /argoproj\.io|toolkit\.fluxcd\.io/;

function isRecordValue(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Directories something in the repository deploys on its own, as GitOps agents name them:
 * - Argo CD `Application` (`argoproj.io`): `spec.source.path` and `spec.sources[].path`
 *   (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#applications,
 *   https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/);
 * - Flux `Kustomization` (`kustomize.toolkit.fluxcd.io`): `spec.path`, relative to the source's
 *   root (https://fluxcd.io/flux/components/kustomize/kustomizations/#path);
 * - Flux `HelmRelease` (`helm.toolkit.fluxcd.io`): `spec.chart.spec.chart`, a chart's path when
 *   its source is a GitRepository (https://fluxcd.io/flux/components/helm/helmreleases/#chart-template).
 * Which repository an agent points at is not checked: a path of this repository is taken as deployed.
 */
function deployedDirs(index: Index, wholeObjects: (file: string) => boolean): Set<string> {
  const dirs = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value !== 'string' || isRemoteReference(value)) return;
    const path = resolvePath('', value.trim());
    if (path !== undefined && path !== '' && index.dirs.has(path)) dirs.add(path);
  };
  for (const file of index.sorted) {
    if (!YAML_FILE.test(file) || isHidden(file) || !wholeObjects(file)) continue;
    const text = index.read(file);
    if (text === undefined || !DEPLOYER_HINT.test(text)) continue;
    const docs = readYamlMappings(text);
    if (!docs.ok) continue;
    for (const doc of docs.value) {
      const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
      const spec = isRecordValue(doc.spec) ? doc.spec : {};
      if (apiVersion.startsWith('argoproj.io/') && doc.kind === 'Application') {
        if (isRecordValue(spec.source)) add(spec.source.path);
        if (Array.isArray(spec.sources)) for (const source of spec.sources) if (isRecordValue(source)) add(source.path);
      } else if (apiVersion.startsWith('kustomize.toolkit.fluxcd.io/') && doc.kind === 'Kustomization') add(spec.path);
      else if (apiVersion.startsWith('helm.toolkit.fluxcd.io/') && doc.kind === 'HelmRelease') {
        const chart = isRecordValue(spec.chart) && isRecordValue(spec.chart.spec) ? spec.chart.spec : {};
        const source = isRecordValue(chart.sourceRef) ? chart.sourceRef : {};
        if (source.kind === 'GitRepository') add(chart.chart);
      }
    }
  }
  return dirs;
}

const VALUES_VARIANT = /^values[-.].+\.ya?ml$/;

function helmNodes(index: Index, chartDir: string, deployedWithDefaults = false): TargetNode[] {
  const files = index.below(chartDir);
  const variants = files.filter((file) => dirname(file) === chartDir && VALUES_VARIANT.test(basename(file)));
  const common = files.filter((file) => !variants.includes(file));
  const reads: ChartReads = { remote: [], outside: [], unreadable: [], archives: [], dependencies: [] };
  const scratch: KustomizeWalk = {
    files: new Set(),
    dirs: new Set(),
    unsure: [],
    remote: reads.remote,
    remoteCharts: [],
    remoteDependencies: [],
    plugins: [],
    outside: reads.outside,
    unreadable: reads.unreadable,
    arguments: [],
    linksOut: [],
    archives: reads.archives,
    needsHelm: false,
    visited: new Set(),
  };
  checkChart(
    chartDir,
    chartTree(index, (path) => readFollowing(index, path, scratch)),
    reads,
  );
  // `file://` dependencies in the repository: built before the render when not vendored, and
  // inputs either way (issue 36). `helm dependency build` packages the dependency's directory as
  // it is (its own dependencies are not built), so its files are checked as helm will read them;
  // what its Chart.yaml names but does not vendor is not fetched by anyone and is not refused.
  const chartYaml = chartDir === '' ? 'Chart.yaml' : `${chartDir}/Chart.yaml`;
  const chartText = readFollowing(index, chartYaml, scratch);
  const dependencies = chartText === undefined ? [] : fileDependencies(chartYaml, chartText, index.files);
  const dependencyDirs: string[] = [];
  const dependencyFiles: string[] = [];
  for (const dependency of dependencies) {
    const inside = chartDir === '' || dependency.dir === chartDir || dependency.dir.startsWith(`${chartDir}/`);
    if (inside || dependencyDirs.includes(dependency.dir)) continue;
    dependencyDirs.push(dependency.dir);
    dependencyFiles.push(...index.below(dependency.dir));
    const own: ChartReads = { remote: [], outside: [], unreadable: [], archives: [] };
    checkChart(
      dependency.dir,
      chartTree(index, (path) => readFollowing(index, path, scratch)),
      own,
    );
    reads.remote.push(...own.remote.filter((entry) => !/(^|\/)Chart\.yaml /.test(entry)));
    reads.outside.push(...own.outside);
    reads.unreadable.push(...own.unreadable);
    reads.archives.push(...own.archives);
  }
  const buildDependencies = dependencies
    .filter((dependency) => !dependency.vendored)
    .map((dependency) => `${dependency.name} (${dependency.repository})`);
  for (const link of new Set(scratch.linksOut))
    reads.outside.push(`${link} is a symbolic link that leads out of the repository`);
  const base = {
    kind: 'helm' as const,
    dir: chartDir,
    inputDirs: [],
    unsure: [],
    remote: reads.remote,
    plugins: [],
    ...((reads.dependencies?.length ?? 0) > 0 ? { remoteDependencies: reads.dependencies } : {}),
    ...(reads.outside.length > 0 ? { outside: reads.outside } : {}),
    ...(reads.unreadable.length > 0 ? { unreadable: reads.unreadable } : {}),
    ...(reads.archives.length > 0 ? { archives: reads.archives } : {}),
    ...(dependencyDirs.length > 0 ? { dependencyDirs } : {}),
    ...(buildDependencies.length > 0 ? { buildDependencies } : {}),
  };
  const inputs = (files: string[]): string[] => [...new Set([...files, ...dependencyFiles])].sort(compare);
  const defaults = { ...base, id: chartDir || '.', inputFiles: inputs(common) };
  if (variants.length === 0) return [defaults];
  // The default values.yaml is a variant of its own when an agent deploys the chart directory.
  return [
    ...(deployedWithDefaults ? [defaults] : []),
    ...variants.map((variant) => ({
      ...base,
      id: variant,
      valuesFiles: [variant],
      inputFiles: inputs([...common, variant]),
    })),
  ];
}

/**
 * The target of a release an agent defines: the chart's files, the values files and ConfigMaps it
 * reads, and the Application or HelmRelease itself, so a change to any of them renders it. A
 * release that is not rendered (a remote chart) reads its own definition and the values files of
 * the repository it names, so a change to them names it as not rendered.
 */
function releaseNode(index: Index, release: HelmRelease): TargetNode {
  const own = {
    id: release.id,
    kind: 'helm' as const,
    release,
    ...(release.arguments ? { arguments: release.arguments } : {}),
  };
  if (release.chart === undefined || release.skip !== undefined)
    return {
      ...own,
      dir: release.chart ?? dirname(release.source),
      inputFiles: [...new Set([release.source, ...release.valuesFiles, ...release.reads])].sort(compare),
      inputDirs: [],
      unsure: [],
      remote: [],
      plugins: [],
    };
  const chart = helmNodes(index, release.chart, true)[0] as TargetNode;
  return {
    ...chart,
    ...own,
    inputFiles: [...new Set([...chart.inputFiles, release.source, ...release.valuesFiles, ...release.reads])].sort(
      compare,
    ),
  };
}

function releasesOf(
  index: Index,
  chartDirs: readonly string[],
  sha: string | undefined,
  wholeObjects: (file: string) => boolean,
): HelmRelease[] {
  return readHelmReleases({
    wholeObjects,
    ...(sha !== undefined ? { revision: sha } : {}),
    files: index.sorted,
    dirs: index.dirs,
    read: index.read,
    isChart: (dir) => chartDirs.includes(dir),
  });
}

function isHidden(path: string): boolean {
  return path.split('/').some((segment) => segment.startsWith('.'));
}

const YAML_FILE = /\.ya?ml$/i;

/** Discover every target of a tree, or the ones the configured patterns name. */
export function discoverTargets(tree: TreeView, options: DiscoverOptions = {}): TargetNode[] {
  const index = buildIndex(tree);
  const kustomizeDirs = [...index.dirs]
    .filter((dir) => kustomizationFile(index.files, dir) !== undefined)
    .sort(compare);
  const chartDirs = [...index.dirs]
    .filter((dir) => index.files.has(dir === '' ? 'Chart.yaml' : `${dir}/Chart.yaml`))
    .sort(compare);
  const isInChart = (path: string): boolean =>
    chartDirs.some((chart) => chart === '' || path === chart || path.startsWith(`${chart}/`));

  const wholeObjects = wholeObjectFiles(index, kustomizeDirs);
  const releases = releasesOf(index, chartDirs, tree.sha, wholeObjects);
  const released = new Set(releases.flatMap((release) => (release.chart === undefined ? [] : [release.chart])));

  if (options.paths && options.paths.length > 0) {
    const patterns = options.paths.map((pattern) => compilePathPattern(pattern));
    const matches = (path: string): boolean => patterns.some((pattern) => pattern.match(path) !== null);
    // The shallowest matches: a directory pattern also matches everything below it.
    const candidates = [...index.dirs, ...index.files].filter(
      (path) => path !== '' && matches(path) && !matches(dirname(path)),
    );
    const nodes: TargetNode[] = [];
    for (const path of candidates.sort(compare)) {
      if (index.dirs.has(path)) {
        if (kustomizationFile(index.files, path)) nodes.push(kustomizeNode(index, path));
        else if (released.has(path))
          nodes.push(
            ...releases.filter((release) => release.chart === path).map((release) => releaseNode(index, release)),
          );
        else if (chartDirs.includes(path)) nodes.push(...helmNodes(index, path));
        else {
          const files = index.below(path).filter((file) => dirname(file) === path && YAML_FILE.test(file));
          nodes.push({
            id: path,
            kind: 'plain',
            dir: path,
            inputFiles: files,
            inputDirs: [],
            unsure: [],
            remote: [],
            plugins: [],
          });
        }
      } else if (YAML_FILE.test(path)) {
        nodes.push({
          id: path,
          kind: 'plain',
          dir: dirname(path),
          file: path,
          inputFiles: [path],
          inputDirs: [],
          unsure: [],
          remote: [],
          plugins: [],
        });
      }
    }
    return nodes;
  }

  const { referenced, components } = referencedKustomizations(index, kustomizeDirs);
  // A base that an agent also deploys on its own is a target of its own too.
  const deployed = deployedDirs(index, wholeObjects);
  const nodes: TargetNode[] = [];
  const kustomizeNodes = kustomizeDirs
    .filter((dir) => (!referenced.has(dir) || deployed.has(dir)) && !components.has(dir) && !isInChart(dir))
    .map((dir) => kustomizeNode(index, dir));
  nodes.push(...kustomizeNodes);
  const inflated = new Set(kustomizeNodes.flatMap((node) => node.inputDirs));
  const topCharts = chartDirs.filter(
    (dir) =>
      !chartDirs.some((other) => other !== dir && (other === '' || dir.startsWith(`${other}/`))) && !inflated.has(dir),
  );
  // A chart an agent deploys is rendered as each release that deploys it; its values files that no
  // release reads stay targets of their own (something outside the repository may deploy them).
  const releasedValues = new Set(releases.flatMap((release) => release.valuesFiles));
  for (const chart of topCharts)
    nodes.push(
      ...(released.has(chart)
        ? helmNodes(index, chart).filter(
            (node) => node.valuesFiles !== undefined && !node.valuesFiles.some((file) => releasedValues.has(file)),
          )
        : helmNodes(index, chart, deployed.has(chart))),
    );

  const claimed = new Set<string>();
  const claimedDirs = new Set<string>([...kustomizeDirs]);
  for (const node of nodes) {
    for (const file of node.inputFiles) claimed.add(file);
    for (const dir of node.inputDirs) claimedDirs.add(dir);
  }
  // A values file of a release is helm's input, not a manifest: read by the release only, so a
  // YAML error in it is said once, by the release that reads it.
  for (const release of releases) for (const file of release.valuesFiles) claimed.add(file);
  const underClaimedDir = (file: string): boolean => {
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      if (claimedDirs.has(dir) && dir !== '') return true;
      if (dir === '') return claimedDirs.has('') && kustomizationFile(index.files, '') !== undefined;
    }
  };
  const plainDirs = new Map<string, string[]>();
  for (const file of [...index.files].sort(compare)) {
    if (
      !YAML_FILE.test(file) ||
      isHidden(file) ||
      claimed.has(file) ||
      isInChart(file) ||
      kustomizeDirs.includes(dirname(file)) ||
      underClaimedDir(file)
    )
      continue;
    const dir = dirname(file);
    plainDirs.set(dir, [...(plainDirs.get(dir) ?? []), file]);
  }
  // Releases claim no file: the Applications and HelmReleases stay objects of their own directory's target.
  for (const release of releases) nodes.push(releaseNode(index, release));
  for (const [dir, files] of plainDirs)
    nodes.push({
      id: dir || '.',
      kind: 'plain',
      dir,
      inputFiles: files,
      inputDirs: [],
      unsure: [],
      remote: [],
      plugins: [],
    });
  return nodes.sort((a, b) => compare(a.id, b.id));
}

/** Does a changed path touch this target? */
export function touches(node: TargetNode, path: string): boolean {
  if (node.inputFiles.includes(path)) return true;
  return node.inputDirs.some((dir) => dir === '' || path === dir || path.startsWith(`${dir}/`));
}

export interface AffectedTargets {
  /**
   * Targets to render: union over the base and head graphs, by id, sorted. `reads`: the changed
   * paths that reach the target (those it reads, or for an unsure target the unplaced ones below
   * it), sorted; absent when the changed paths are unknown.
   */
  targets: Array<{ base?: TargetNode; head?: TargetNode; reads?: string[] }>;
  /** Changed paths no target reads. Candidates (unsure targets whose directory holds them) are rendered anyway. */
  unplaced: string[];
}

/**
 * The targets a set of changed paths touches, from the graphs of both commits (a reference added at
 * head is in head's graph; a file deleted at head is in base's). A changed path that no target
 * reads but that sits below an unsure target (its graph hit a parse error or a missing reference)
 * renders that target anyway: "when unsure, render it". `changed: null` means everything changed.
 */
export function affectedTargets(
  baseNodes: TargetNode[],
  headNodes: TargetNode[],
  changed: readonly string[] | null,
): AffectedTargets {
  const ids = [...new Set([...baseNodes.map((node) => node.id), ...headNodes.map((node) => node.id)])].sort(compare);
  const byId = (nodes: TargetNode[], id: string): TargetNode | undefined => nodes.find((node) => node.id === id);
  const placed = new Set<string>();
  const targets: AffectedTargets['targets'] = [];
  for (const id of ids) {
    const base = byId(baseNodes, id);
    const head = byId(headNodes, id);
    const hits =
      changed === null
        ? ['*']
        : changed.filter((path) => (base && touches(base, path)) || (head && touches(head, path)));
    for (const hit of hits) placed.add(hit);
    if (hits.length > 0)
      targets.push({
        ...(base ? { base } : {}),
        ...(head ? { head } : {}),
        ...(changed === null ? {} : { reads: [...hits].sort(compare) }),
      });
  }
  const unplaced = changed === null ? [] : changed.filter((path) => !placed.has(path)).sort(compare);
  for (const path of unplaced) {
    for (const id of ids) {
      const base = byId(baseNodes, id);
      const head = byId(headNodes, id);
      const unsure = (base?.unsure.length ?? 0) + (head?.unsure.length ?? 0) > 0;
      const dir = (head ?? base)?.dir ?? '';
      if (!unsure || !(dir === '' || path.startsWith(`${dir}/`))) continue;
      const known = targets.find((target) => (target.base ?? target.head)?.id === id);
      if (known) {
        // Already rendered for a file it reads: the unplaced file below it reaches it too.
        if (known.reads && !known.reads.includes(path)) known.reads = [...known.reads, path].sort(compare);
        continue;
      }
      targets.push({ ...(base ? { base } : {}), ...(head ? { head } : {}), reads: [path] });
    }
  }
  targets.sort((a, b) => compare((a.base ?? a.head)?.id ?? '', (b.base ?? b.head)?.id ?? ''));
  return { targets, unplaced };
}
