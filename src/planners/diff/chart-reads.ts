import { dirname, resolvePath } from '../repo-path.js';
import { foldKey, readYamlMappings, recordList, stringField } from '../kustomize/index.js';
import { shown } from './shown.js';

/**
 * What `helm template` reads from a chart beyond its own directory (helm/helm, issue 22):
 * - `Chart.yaml` `dependencies[].repository`: `helm template` without `--dependency-update`
 *   (Escalator never passes it, nor does kustomize) only checks that each dependency is vendored
 *   below `charts/` (`action.CheckDependencies`, `pkg/cmd/install.go`); a `file://` dependency
 *   outside the repository and a remote one that is not vendored are refused here all the same,
 *   so nothing depends on that flag staying off. A chart whose only remote reads are dependencies
 *   not vendored (`dependencies`) is named "not rendered" by the adapter, as a remote chart is.
 *   Helm reads `Chart.yaml` with `sigs.k8s.io/yaml`, so field names match case-insensitively like
 *   kustomize's.
 * - `values.schema.json` of the chart and of every subchart: helm compiles it with loaders for
 *   `file`, `http` and `https` (`pkg/chart/common/util/jsonschema.go`), so a `$ref`, `$dynamicRef`,
 *   `$recursiveRef` or an unknown `$schema` fetches a URL or reads any local file. Only
 *   same-document references (`#…`) and the published JSON Schema meta-schemas pass.
 * - chart archives (`charts/*.tgz`) are opened by helm; what they hold is checked by the adapter,
 *   which can read them (`archives`).
 */
export interface ChartReads {
  remote: string[];
  outside: string[];
  unreadable: string[];
  /** Subchart archives whose contents only the adapter can check. */
  archives: string[];
  /**
   * The entries of `remote` that are chart dependencies from a chart repository not vendored under
   * `charts/`: the chart is not rendered (as a remote chart is), rather than refused. When absent,
   * they are in `remote` only.
   */
  dependencies?: string[];
}

/** The meta-schemas helm's JSON Schema library knows without loading anything. */
const KNOWN_SCHEMAS = new Set([
  'http://json-schema.org/draft-04/schema',
  'http://json-schema.org/draft-06/schema',
  'http://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2020-12/schema',
]);
const REFERENCE_KEYS = ['$ref', '$dynamicRef', '$recursiveRef'];

/** The references of a values schema that make helm load something: `$ref` to another document, an unknown `$schema`. */
export function schemaLoads(schema: unknown): Array<{ key: string; value: string }> {
  const loads: Array<{ key: string; value: string }> = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 200 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (REFERENCE_KEYS.includes(key) && typeof value === 'string' && !value.startsWith('#'))
        loads.push({ key, value });
      else if (key === '$schema' && typeof value === 'string' && !KNOWN_SCHEMAS.has(value.replace(/#$/, '')))
        loads.push({ key, value });
      else if (
        (REFERENCE_KEYS.includes(key) || key === '$schema') &&
        typeof value !== 'string' &&
        typeof value !== 'object'
      )
        loads.push({ key, value: String(value) });
      visit(value, depth + 1);
    }
  };
  visit(schema, 0);
  return loads;
}

/** Check one `values.schema.json` text. */
export function checkValuesSchema(path: string, text: string, into: ChartReads): void {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    into.unreadable.push(`${path} does not parse as JSON`);
    return;
  }
  for (const { key, value } of schemaLoads(schema)) into.remote.push(`${path} ${key}: ${shown(value)}`);
}

/** Check one `Chart.yaml`: its dependencies, against what is vendored in `files` (every file of the tree). */
export function checkChartYaml(path: string, text: string, files: ReadonlySet<string>, into: ChartReads): void {
  const docs = readYamlMappings(text);
  if (!docs.ok) {
    into.unreadable.push(`${path}${docs.problem}`);
    return;
  }
  const chartDir = dirname(path);
  const vendored = (name: string): boolean => {
    const prefix = `${chartDir === '' ? '' : `${chartDir}/`}charts/`;
    for (const file of files) {
      if (!file.startsWith(prefix)) continue;
      const entry = file.slice(prefix.length).split('/')[0] ?? '';
      if (entry === name || (entry.startsWith(`${name}-`) && /\.tgz$/i.test(entry))) return true;
    }
    return false;
  };
  for (const doc of docs.value) {
    let dependencies: ReturnType<typeof recordList>;
    try {
      dependencies = recordList(doc, 'dependencies');
    } catch (error) {
      into.unreadable.push(`${path} ${(error as Error).message}`);
      continue;
    }
    for (const { field, record } of dependencies) {
      let repository: string | undefined;
      let name: string | undefined;
      try {
        repository = stringField(record, 'repository', field)[0]?.value;
        name = stringField(record, 'name', field)[0]?.value;
      } catch (error) {
        into.unreadable.push(`${path} ${(error as Error).message}`);
        continue;
      }
      if (repository === undefined || repository.trim() === '') continue;
      const key = Object.keys(record).find((candidate) => foldKey(candidate) === 'repository') ?? 'repository';
      if (/^file:\/\//i.test(repository)) {
        if (resolvePath(chartDir, repository.slice('file://'.length)) === undefined)
          into.outside.push(`${path} ${field}.${key} reads ${shown(repository)}`);
      } else if (!name || !vendored(name)) {
        const entry = `${path} ${field}.${key}: ${shown(repository)} (${name ? shown(name) : 'a dependency without a name'} is not vendored under ${chartDir === '' ? '' : `${chartDir}/`}charts/)`;
        into.remote.push(entry);
        into.dependencies?.push(entry);
      }
    }
  }
}

/** A `file://` dependency of a chart, resolved inside the repository. */
export interface FileDependency {
  /** The dependency's name as Chart.yaml gives it. */
  name: string;
  /** The dependency chart's directory in the repository. */
  dir: string;
  /** As written (`file://../common`). */
  repository: string;
  /** Found below the chart's `charts/` (a directory or `<name>-<version>.tgz`). */
  vendored: boolean;
}

/**
 * The `file://` dependencies of one `Chart.yaml` that stay inside the repository (the others are
 * refused by {@link checkChartYaml}), and whether each is vendored under `charts/`: helm's
 * `action.CheckDependencies` fails on a missing one, which is when Argo CD runs `helm dependency
 * build` (reposerver/repository/repository.go `helmTemplate`, util/helm/helm.go
 * `IsMissingDependencyErr`).
 */
export function fileDependencies(path: string, text: string, files: ReadonlySet<string>): FileDependency[] {
  const docs = readYamlMappings(text);
  if (!docs.ok) return [];
  const chartDir = dirname(path);
  const prefix = `${chartDir === '' ? '' : `${chartDir}/`}charts/`;
  const found: FileDependency[] = [];
  for (const doc of docs.value) {
    let dependencies: ReturnType<typeof recordList>;
    try {
      dependencies = recordList(doc, 'dependencies');
    } catch {
      continue; // unreadable: checkChartYaml refuses it
    }
    for (const { field, record } of dependencies) {
      let repository: string | undefined;
      let name: string | undefined;
      let alias: string | undefined;
      try {
        repository = stringField(record, 'repository', field)[0]?.value;
        name = stringField(record, 'name', field)[0]?.value;
        alias = stringField(record, 'alias', field)[0]?.value;
      } catch {
        continue;
      }
      if (!name || repository === undefined || !/^file:\/\//i.test(repository.trim())) continue;
      const dir = resolvePath(chartDir, repository.trim().slice('file://'.length));
      if (dir === undefined) continue;
      const names = [name, ...(alias ? [alias] : [])];
      let vendored = false;
      for (const file of files) {
        if (!file.startsWith(prefix)) continue;
        const entry = file.slice(prefix.length).split('/')[0] ?? '';
        if (names.includes(entry) || (entry.startsWith(`${name}-`) && /\.tgz$/i.test(entry))) vendored = true;
      }
      found.push({ name, dir, repository: repository.trim(), vendored });
    }
  }
  return found;
}

/** What `checkChart` needs of a tree: its files (sorted), a reader that follows symbolic links, and where a linked folder leads. */
export interface ChartTree {
  files: readonly string[];
  read: (path: string) => string | undefined;
  /** The folder a symbolic link below a chart leads to (helm's loader follows links), if it is one. */
  linkedFolder?: (path: string) => string | undefined;
}

/** Check a chart directory and every subchart below it, following linked folders. */
export function checkChart(
  chartDir: string,
  tree: ChartTree,
  into: ChartReads,
  visited: Set<string> = new Set(),
): void {
  if (visited.has(chartDir) || visited.size > 100) return;
  visited.add(chartDir);
  const fileSet = new Set(tree.files);
  const below = chartDir === '' ? tree.files : tree.files.filter((file) => file.startsWith(`${chartDir}/`));
  for (const file of below) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const folder = tree.linkedFolder?.(file);
    if (folder !== undefined) checkChart(folder, tree, into, visited);
    else if (name === 'Chart.yaml') {
      const text = tree.read(file);
      if (text !== undefined) checkChartYaml(file, text, fileSet, into);
    } else if (name === 'values.schema.json') {
      const text = tree.read(file);
      if (text !== undefined) checkValuesSchema(file, text, into);
    } else if (/\.tgz$/i.test(name) && /(^|\/)charts\/[^/]+$/.test(file)) into.archives.push(file);
  }
}
