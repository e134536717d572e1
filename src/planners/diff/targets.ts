import { parse } from 'yaml';
import { matchEnvironmentPath } from '../../config/repo-config.js';
import type { TargetNode } from './types.js';

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
  files: readonly string[];
  /** A file's text, or undefined when it is missing or not text. */
  read: (path: string) => string | undefined;
}

export interface DiscoverOptions {
  /** Target patterns (`apps/*\/overlays/prod`); empty or absent: discover every target. */
  paths?: readonly string[];
}

const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const REMOTE = /^(https?:\/\/|git@|ssh:\/\/|git::|github\.com\/|gitlab\.com\/|bitbucket\.org\/)|\?ref=|\/\/.*\?/;

export function isRemoteReference(entry: string): boolean {
  return REMOTE.test(entry);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Join a relative reference onto a directory; `undefined` when it climbs out of the repository. */
export function resolvePath(dir: string, relative: string): string | undefined {
  if (relative.startsWith('/')) return undefined;
  const parts = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
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
  return { files, dirs, below, read: tree.read };
}

/** The kustomization file of a directory, if it has one. */
export function kustomizationFile(files: ReadonlySet<string>, dir: string): string | undefined {
  return KUSTOMIZATION_NAMES.map((name) => (dir === '' ? name : `${dir}/${name}`)).find((path) => files.has(path));
}

interface KustomizeWalk {
  files: Set<string>;
  dirs: Set<string>;
  unsure: string[];
  remote: string[];
  plugins: string[];
  /** References that leave the repository (`../` past the root, absolute paths). */
  outside: string[];
  needsHelm: boolean;
  /** Kustomization directories reached (including the root). */
  visited: Set<string>;
}

function parseYaml(text: string): unknown {
  try {
    return parse(text, { maxAliasCount: 100, prettyErrors: false, uniqueKeys: false });
  } catch {
    return undefined;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : typeof value === 'string' ? [value] : [];
}

function records(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** A generator/transformer configuration that would run a plugin rather than a built-in. */
function pluginReason(config: unknown): string | undefined {
  if (!isRecord(config)) return undefined;
  const metadata = isRecord(config.metadata) ? config.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  if ('config.kubernetes.io/function' in annotations || 'config.k8s.io/function' in annotations) return 'declares a KRM function (exec or container plugin)';
  if (typeof config.apiVersion === 'string' && config.apiVersion !== 'builtin' && typeof config.kind === 'string') return `uses the non-builtin plugin ${config.apiVersion}/${config.kind}`;
  return undefined;
}

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
  const text = index.read(file);
  const doc = text === undefined ? undefined : parseYaml(text);
  if (!isRecord(doc)) {
    walk.unsure.push(`${file} does not parse as a YAML mapping`);
    walk.dirs.add(dir);
    return;
  }
  const addFile = (entry: string, checkPlugin: boolean): void => {
    const path = resolvePath(dir, entry);
    if (path === undefined) {
      walk.unsure.push(`${file} references ${entry} outside the repository`);
      walk.outside.push(`${file} reads ${entry}`);
      return;
    }
    if (index.files.has(path)) {
      walk.files.add(path);
      if (checkPlugin) {
        const content = index.read(path);
        const reason = content === undefined ? undefined : pluginReason(parseYaml(content));
        if (reason) walk.plugins.push(`${path} ${reason}`);
      }
    } else if (index.dirs.has(path)) {
      walk.unsure.push(`${file} references the directory ${entry} where a file is expected`);
      walk.dirs.add(path);
    } else {
      // Missing: kustomize will fail; a later commit adding it must still count as a change.
      walk.files.add(path);
      walk.unsure.push(`${file} references ${entry}, which does not exist`);
    }
  };
  const addResource = (entry: string, inPluginContext: boolean): void => {
    if (isRemoteReference(entry)) {
      walk.remote.push(entry);
      return;
    }
    const path = resolvePath(dir, entry);
    if (path !== undefined && index.dirs.has(path) && !index.files.has(path)) walkKustomization(index, path, walk, inPluginContext);
    else addFile(entry, inPluginContext);
  };
  for (const entry of [...strings(doc.resources), ...strings(doc.bases), ...strings(doc.components)]) addResource(entry, pluginContext);
  for (const field of ['generators', 'transformers', 'validators']) {
    for (const entry of strings(doc[field])) {
      if (entry.includes('\n')) {
        const reason = pluginReason(parseYaml(entry));
        if (reason) walk.plugins.push(`${file} ${field} entry ${reason}`);
        continue;
      }
      addResource(entry, true);
    }
  }
  if (pluginContext) {
    // Resources listed by a kustomization used as a generator/transformer are plugin configurations.
    for (const entry of strings(doc.resources)) {
      const path = resolvePath(dir, entry);
      if (path && index.files.has(path)) {
        const content = index.read(path);
        const reason = content === undefined ? undefined : pluginReason(parseYaml(content));
        if (reason && !walk.plugins.some((plugin) => plugin.startsWith(`${path} `))) walk.plugins.push(`${path} ${reason}`);
      }
    }
  }
  for (const entry of [...strings(doc.crds), ...strings(doc.configurations)]) addFile(entry, false);
  for (const entry of strings(doc.patchesStrategicMerge)) if (!/[\n:]/.test(entry)) addFile(entry, false);
  for (const patch of [...records(doc.patches), ...records(doc.patchesJson6902), ...records(doc.replacements)]) if (typeof patch.path === 'string') addFile(patch.path, false);
  if (isRecord(doc.openapi) && typeof doc.openapi.path === 'string') addFile(doc.openapi.path, false);
  for (const generator of [...records(doc.configMapGenerator), ...records(doc.secretGenerator)]) {
    for (const entry of strings(generator.files)) addFile(entry.includes('=') ? entry.slice(entry.indexOf('=') + 1) : entry, false);
    for (const entry of [...strings(generator.envs), ...strings(generator.env)]) addFile(entry, false);
  }
  const charts = records(doc.helmCharts);
  if (charts.length > 0) {
    walk.needsHelm = true;
    const globals = isRecord(doc.helmGlobals) ? doc.helmGlobals : {};
    const home = typeof globals.chartHome === 'string' ? globals.chartHome : 'charts';
    for (const chart of charts) {
      const name = typeof chart.name === 'string' ? chart.name : undefined;
      for (const entry of [...strings(chart.valuesFile), ...strings(chart.additionalValuesFiles)]) addFile(entry, false);
      if (!name) continue;
      const version = typeof chart.version === 'string' ? chart.version : undefined;
      const candidates = [`${home}/${name}`, ...(version ? [`${home}/${name}-${version}/${name}`] : [])].map((candidate) => resolvePath(dir, candidate));
      const local = candidates.filter((candidate): candidate is string => candidate !== undefined && index.dirs.has(candidate));
      for (const chartDir of local) walk.dirs.add(chartDir);
      if (local.length === 0) {
        if (typeof chart.repo === 'string' && chart.repo !== '') walk.remote.push(`${chart.repo} (chart ${name})`);
        else walk.unsure.push(`${file} inflates the chart ${name}, which is not in ${home}/`);
        const home0 = resolvePath(dir, home);
        if (home0 !== undefined) walk.dirs.add(home0);
      }
    }
  }
}

function kustomizeNode(index: Index, dir: string): TargetNode {
  const walk: KustomizeWalk = { files: new Set(), dirs: new Set(), unsure: [], remote: [], plugins: [], outside: [], needsHelm: false, visited: new Set() };
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
  if (walk.outside.length > 0) node.outside = walk.outside;
  return node;
}

/** Kustomization directories another kustomization references (as resource, base, component, generator…). */
function referencedKustomizations(index: Index, dirs: string[]): { referenced: Set<string>; components: Set<string> } {
  const referenced = new Set<string>();
  const components = new Set<string>();
  for (const dir of dirs) {
    const file = kustomizationFile(index.files, dir) as string;
    const text = index.read(file);
    const doc = text === undefined ? undefined : parseYaml(text);
    if (!isRecord(doc)) continue;
    if (doc.kind === 'Component') components.add(dir);
    for (const field of ['resources', 'bases', 'components', 'generators', 'transformers', 'validators']) {
      for (const entry of strings(doc[field])) {
        const path = resolvePath(dir, entry);
        if (path !== undefined && path !== dir && kustomizationFile(index.files, path)) referenced.add(path);
      }
    }
  }
  return { referenced, components };
}

const VALUES_VARIANT = /^values[-.].+\.ya?ml$/;

function helmNodes(index: Index, chartDir: string): TargetNode[] {
  const files = index.below(chartDir);
  const variants = files.filter((file) => dirname(file) === chartDir && VALUES_VARIANT.test(basename(file)));
  const common = files.filter((file) => !variants.includes(file));
  const base = { kind: 'helm' as const, dir: chartDir, inputDirs: [], unsure: [], remote: [], plugins: [] };
  if (variants.length === 0) return [{ ...base, id: chartDir || '.', inputFiles: common }];
  return variants.map((variant) => ({ ...base, id: variant, valuesFiles: [variant], inputFiles: [...common, variant].sort(compare) }));
}

function isHidden(path: string): boolean {
  return path.split('/').some((segment) => segment.startsWith('.'));
}

const YAML_FILE = /\.ya?ml$/i;

/** Discover every target of a tree, or the ones the configured patterns name. */
export function discoverTargets(tree: TreeView, options: DiscoverOptions = {}): TargetNode[] {
  const index = buildIndex(tree);
  const kustomizeDirs = [...index.dirs].filter((dir) => kustomizationFile(index.files, dir) !== undefined).sort(compare);
  const chartDirs = [...index.dirs].filter((dir) => index.files.has(dir === '' ? 'Chart.yaml' : `${dir}/Chart.yaml`)).sort(compare);
  const isInChart = (path: string): boolean => chartDirs.some((chart) => chart === '' || path === chart || path.startsWith(`${chart}/`));

  if (options.paths && options.paths.length > 0) {
    const patterns = options.paths;
    const matches = (path: string): boolean => patterns.some((pattern) => matchEnvironmentPath(pattern, path) !== null);
    // The shallowest matches: a directory pattern also matches everything below it.
    const candidates = [...index.dirs, ...index.files].filter((path) => path !== '' && matches(path) && !matches(dirname(path)));
    const nodes: TargetNode[] = [];
    for (const path of candidates.sort(compare)) {
      if (index.dirs.has(path)) {
        if (kustomizationFile(index.files, path)) nodes.push(kustomizeNode(index, path));
        else if (chartDirs.includes(path)) nodes.push(...helmNodes(index, path));
        else {
          const files = index.below(path).filter((file) => dirname(file) === path && YAML_FILE.test(file));
          nodes.push({ id: path, kind: 'plain', dir: path, inputFiles: files, inputDirs: [], unsure: [], remote: [], plugins: [] });
        }
      } else if (YAML_FILE.test(path)) {
        nodes.push({ id: path, kind: 'plain', dir: dirname(path), file: path, inputFiles: [path], inputDirs: [], unsure: [], remote: [], plugins: [] });
      }
    }
    return nodes;
  }

  const { referenced, components } = referencedKustomizations(index, kustomizeDirs);
  const nodes: TargetNode[] = [];
  const kustomizeNodes = kustomizeDirs.filter((dir) => !referenced.has(dir) && !components.has(dir) && !isInChart(dir)).map((dir) => kustomizeNode(index, dir));
  nodes.push(...kustomizeNodes);
  const inflated = new Set(kustomizeNodes.flatMap((node) => node.inputDirs));
  const topCharts = chartDirs.filter((dir) => !chartDirs.some((other) => other !== dir && (other === '' || dir.startsWith(`${other}/`))) && !inflated.has(dir));
  for (const chart of topCharts) nodes.push(...helmNodes(index, chart));

  const claimed = new Set<string>();
  const claimedDirs = new Set<string>([...kustomizeDirs]);
  for (const node of nodes) {
    for (const file of node.inputFiles) claimed.add(file);
    for (const dir of node.inputDirs) claimedDirs.add(dir);
  }
  const underClaimedDir = (file: string): boolean => {
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      if (claimedDirs.has(dir) && dir !== '') return true;
      if (dir === '') return claimedDirs.has('') && kustomizationFile(index.files, '') !== undefined;
    }
  };
  const plainDirs = new Map<string, string[]>();
  for (const file of [...index.files].sort(compare)) {
    if (!YAML_FILE.test(file) || isHidden(file) || claimed.has(file) || isInChart(file) || kustomizeDirs.includes(dirname(file)) || underClaimedDir(file)) continue;
    const dir = dirname(file);
    plainDirs.set(dir, [...(plainDirs.get(dir) ?? []), file]);
  }
  for (const [dir, files] of plainDirs) nodes.push({ id: dir || '.', kind: 'plain', dir, inputFiles: files, inputDirs: [], unsure: [], remote: [], plugins: [] });
  return nodes.sort((a, b) => compare(a.id, b.id));
}

/** Does a changed path touch this target? */
export function touches(node: TargetNode, path: string): boolean {
  if (node.inputFiles.includes(path)) return true;
  return node.inputDirs.some((dir) => dir === '' || path === dir || path.startsWith(`${dir}/`));
}

export interface AffectedTargets {
  /** Targets to render: union over the base and head graphs, by id, sorted. */
  targets: Array<{ base?: TargetNode; head?: TargetNode }>;
  /** Changed paths no target reads. Candidates (unsure targets whose directory holds them) are rendered anyway. */
  unplaced: string[];
}

/**
 * The targets a set of changed paths touches, from the graphs of both commits (a reference added at
 * head is in head's graph; a file deleted at head is in base's). A changed path that no target
 * reads but that sits below an unsure target (its graph hit a parse error or a missing reference)
 * renders that target anyway: "when unsure, render it". `changed: null` means everything changed.
 */
export function affectedTargets(baseNodes: TargetNode[], headNodes: TargetNode[], changed: readonly string[] | null): AffectedTargets {
  const ids = [...new Set([...baseNodes.map((node) => node.id), ...headNodes.map((node) => node.id)])].sort(compare);
  const byId = (nodes: TargetNode[], id: string): TargetNode | undefined => nodes.find((node) => node.id === id);
  const placed = new Set<string>();
  const targets: AffectedTargets['targets'] = [];
  for (const id of ids) {
    const base = byId(baseNodes, id);
    const head = byId(headNodes, id);
    const hits = changed === null ? ['*'] : changed.filter((path) => (base && touches(base, path)) || (head && touches(head, path)));
    for (const hit of hits) placed.add(hit);
    if (hits.length > 0) targets.push({ ...(base ? { base } : {}), ...(head ? { head } : {}) });
  }
  const unplaced = changed === null ? [] : changed.filter((path) => !placed.has(path)).sort(compare);
  for (const path of unplaced) {
    for (const id of ids) {
      if (targets.some((target) => (target.base ?? target.head)?.id === id)) continue;
      const base = byId(baseNodes, id);
      const head = byId(headNodes, id);
      const unsure = (base?.unsure.length ?? 0) + (head?.unsure.length ?? 0) > 0;
      const dir = (head ?? base)?.dir ?? '';
      if (unsure && (dir === '' || path.startsWith(`${dir}/`))) targets.push({ ...(base ? { base } : {}), ...(head ? { head } : {}) });
    }
  }
  targets.sort((a, b) => compare((a.base ?? a.head)?.id ?? '', (b.base ?? b.head)?.id ?? ''));
  return { targets, unplaced };
}
