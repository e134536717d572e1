import { parseAllDocuments } from 'yaml';
import { lineAt } from '../text.js';
import { checkYamlInput } from '../yaml-guard.js';

/**
 * What a kustomization file makes kustomize read, read the way kustomize reads it. One reader for
 * every planner that follows kustomizations (issue 37): the diff's pre-check of issue 22, which
 * refuses remote and outside reads before any tool runs, and the editor's render graph
 * (`image-edit/renders.ts`), which follows resources and patches to the manifests they render.
 *
 * How kustomize reads the file (kubernetes-sigs/kustomize `api/types/kustomization.go`,
 * `Kustomization.Unmarshal`): `sigs.k8s.io/yaml.YAMLToJSON` (go-yaml v2, YAML 1.1: merge keys
 * `<<` applied, `!!binary` decoded, only the first document kept), then `encoding/json` with
 * `DisallowUnknownFields` — which matches field names case-insensitively (`Resources`,
 * `configmapgenerator`, and Unicode folds such as `ſ` for `s` and `K` (Kelvin) for `k`). We mirror
 * that conservatively: YAML 1.1 with merge keys, names folded, and every document treated as
 * applied; a key spelled twice (in two cases) counts with every value.
 *
 * The path-valued fields, from `api/types/kustomization.go`, `kvpairsources.go`, `patch.go`,
 * `replacementfield.go`, `helmchartargs.go` and `FixKustomization` (which folds `bases` into
 * `resources`, `env` into `envs` and `helmChartInflationGenerator` into `helmCharts`/`helmGlobals`):
 * - loaded as a file, a directory or a git clone (`accumulateResources`: `ldr.Load`, else
 *   `ldr.New`, which clones anything `git.NewRepoSpecFromURL` parses — `ssh://`, `https://`,
 *   `http://`, `file://` in any case, `git::`, `user@host:path`, `github.com/…`):
 *   `resources`, `bases`, `components`, and `generators`/`transformers`/`validators` (or inline
 *   plugin configurations);
 * - loaded with `ldr.Load` (`api/internal/loader/fileloader.go`: fetched over HTTP when
 *   `url.Parse` gives the scheme http or https, which Go lowercases): `crds`, `configurations`,
 *   `patchesStrategicMerge` entries, `patches[].path`, `patchesJson6902[].path`,
 *   `replacements[].path`, `openapi.path`, `configMapGenerator`/`secretGenerator` `files`
 *   (`[key=]path`, `api/internal/generators/utils.go ParseFileSource`), `envs` and `env`,
 *   `helmCharts[].valuesFile` and `additionalValuesFiles`;
 * - joined without the load restrictor (`HelmChartInflationGenerator.go absChartHome`, an
 *   absolute path taken as is): `helmGlobals.chartHome`, `helmCharts[].name` and `version` below
 *   it, `helmGlobals.configHome` ("can be located anywhere"), and the old
 *   `helmChartInflationGenerator[]` `chartHome`, `chartName`, `chartVersion`, `values`,
 *   `helmHome` (`helmBin` is ignored by kustomize and checked anyway);
 * - remote: `helmCharts[].repo` (`helm pull`) and `helmChartInflationGenerator[].chartRepoUrl`.
 * Builtin plugin configurations (generator/transformer files, inline entries) carry the same
 * fields at their top level (`path`, `paths`, `files`, `envs`, `env`, `valuesFile`,
 * `additionalValuesFiles`, `chartHome`, `configHome`, `repo`, `replacements[].path`).
 */

/** One path-valued field: where it is (`configMapGenerator[0].files[1]`) and what it says. */
export interface FieldRef {
  field: string;
  value: string;
}

/**
 * The kinds of values kustomize puts on helm's argument list from a chart entry
 * (`HelmChart.AsHelmArgs`); the diff's argument checks (`diff/arguments.ts`) say what each must be.
 */
export type ChartArgumentKind =
  | 'release-name'
  | 'namespace'
  | 'chart-name'
  | 'chart-version'
  | 'kube-version'
  | 'api-version'
  | 'name-template'
  | 'values-path'
  | 'extra-args';

/** A value of a chart entry bound for helm's argument list: its kind, where it is written and what it says. */
export interface ChartArgument {
  kind: ChartArgumentKind;
  /** Where in the file: `helmCharts[0].releaseName` (keys as written). */
  field: string;
  value: string;
}

/** A chart that `helmCharts` (or `helmChartInflationGenerator`) inflates. */
export interface ChartRef {
  field: string;
  name?: FieldRef;
  version?: FieldRef;
  repo?: FieldRef;
  /** What kustomize passes to helm from this entry besides paths (release name, namespace, versions, name template…), checked before any tool runs. */
  arguments: ChartArgument[];
}

export interface KustomizationReads {
  isComponent: boolean;
  /** `resources`, `bases`, `components`: a file, a kustomization directory, or remote. */
  resources: FieldRef[];
  /** `generators`, `transformers`, `validators`: a file or directory of plugin configurations, or an inline one. */
  plugins: FieldRef[];
  /** Fields kustomize reads one file through (`ldr.Load`, which also fetches URLs). */
  files: FieldRef[];
  /** `patchesStrategicMerge` entries: a file, or an inline patch. */
  strategicMerge: FieldRef[];
  /** Directories helm reads below or writes (chart home, config home). */
  homes: FieldRef[];
  /** The chart home (default `charts`) and the charts inflated. */
  chartHome?: FieldRef;
  charts: ChartRef[];
}

export type ReadOutcome<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Go's `encoding/json` matches field names case-insensitively, with Unicode simple folding. */
export function foldKey(key: string): string {
  return key
    .replace(/\u017f/g, 's')
    .replace(/\u212a/g, 'k')
    .toLowerCase();
}

class Unreadable extends Error {}

type Record_ = Record<string, unknown>;

function isRecord(value: unknown): value is Record_ {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Uint8Array) &&
    !(value instanceof Date) &&
    !(value instanceof Map) &&
    !(value instanceof Set)
  );
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value) || value instanceof Set) return 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (value instanceof Date) return 'a timestamp';
  if (value instanceof Map || isRecord(value)) return 'a mapping';
  return `a ${typeof value}`;
}

/** Every value of the keys that fold to `name`, with the key as written. */
function pick(record: Record_, name: string): Array<{ key: string; value: unknown }> {
  const folded = foldKey(name);
  return Object.entries(record)
    .filter(([key, value]) => foldKey(key) === folded && value !== null && value !== undefined)
    .map(([key, value]) => ({ key, value }));
}

const at = (prefix: string, key: string): string => (prefix === '' ? key : `${prefix}.${key}`);

/** A string field; `null` is kustomize's zero value. */
export function stringField(record: Record_, name: string, prefix = ''): FieldRef[] {
  return pick(record, name).map(({ key, value }) => {
    if (typeof value !== 'string')
      throw new Unreadable(`${at(prefix, key)} is ${describe(value)} where kustomize expects a string`);
    return { field: at(prefix, key), value };
  });
}

/** A list of strings. */
export function stringList(record: Record_, name: string, prefix = ''): FieldRef[] {
  return pick(record, name).flatMap(({ key, value }) => {
    if (!Array.isArray(value))
      throw new Unreadable(`${at(prefix, key)} is ${describe(value)} where kustomize expects a list`);
    return value.map((item, index) => {
      const field = `${at(prefix, key)}[${index}]`;
      if (typeof item !== 'string')
        throw new Unreadable(`${field} is ${describe(item)} where kustomize expects a string`);
      return { field, value: item };
    });
  });
}

/** A list of mappings (a `null` item is a zero value). */
export function recordList(record: Record_, name: string, prefix = ''): Array<{ field: string; record: Record_ }> {
  return pick(record, name).flatMap(({ key, value }) => {
    if (!Array.isArray(value))
      throw new Unreadable(`${at(prefix, key)} is ${describe(value)} where kustomize expects a list`);
    return value.flatMap((item, index) => {
      const field = `${at(prefix, key)}[${index}]`;
      if (item === null) return [];
      if (!isRecord(item)) throw new Unreadable(`${field} is ${describe(item)} where kustomize expects a mapping`);
      return [{ field, record: item }];
    });
  });
}

/** A mapping. */
export function recordField(record: Record_, name: string, prefix = ''): Array<{ field: string; record: Record_ }> {
  return pick(record, name).map(({ key, value }) => {
    if (!isRecord(value))
      throw new Unreadable(`${at(prefix, key)} is ${describe(value)} where kustomize expects a mapping`);
    return { field: at(prefix, key), record: value };
  });
}

/** Which documents of a stream count. */
export interface ReadOptions {
  /**
   * `every` (the default, the diff's conservative pre-check): every document, as if each applied.
   * `first`: only the first, which is what kustomize applies (`sigs.k8s.io/yaml.YAMLToJSON` keeps
   * the first document; checked with `kubectl kustomize` v5.5.0: a second document's `resources`
   * are not rendered). The render graph of the editor reads what kustomize applies.
   */
  documents?: 'every' | 'first';
}

/**
 * Every document of a YAML text as data, read as YAML 1.1 with merge keys (go-yaml v2's
 * semantics), or why not: not UTF-8, over Escalator's YAML limits, a parse error, aliases that
 * expand too far, a document that is not a mapping.
 */
export function readYamlMappings(text: string, options: ReadOptions = {}): ReadOutcome<Record_[]> {
  if (text.includes('\uFFFD')) return { ok: false, problem: ' is not valid UTF-8' };
  const limit = checkYamlInput(text);
  if (limit) return { ok: false, problem: `: ${limit.reason}` };
  const mappings: Record_[] = [];
  const documents = parseAllDocuments(text, {
    version: '1.1',
    merge: true,
    uniqueKeys: false,
    prettyErrors: false,
    logLevel: 'error',
  });
  for (const [index, doc] of (options.documents === 'first' ? documents.slice(0, 1) : documents).entries()) {
    const error = doc.errors[0];
    if (error) return { ok: false, problem: ` does not parse as YAML (line ${lineAt(text, error.pos[0])})` };
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1_000 });
    } catch {
      return { ok: false, problem: ' uses aliases that expand further than Escalator reads' };
    }
    if (value === null || value === undefined) continue;
    if (!isRecord(value)) return { ok: false, problem: ` document ${index + 1} is ${describe(value)}, not a mapping` };
    mappings.push(value);
  }
  return { ok: true, value: mappings };
}

/** The fields of a chart entry kustomize puts on helm's argument list, by the names of `helmCharts` or of the old `helmChartInflationGenerator`. */
const CHART_ARGUMENTS = {
  helmCharts: [
    { name: 'releaseName', kind: 'release-name' },
    { name: 'namespace', kind: 'namespace' },
    { name: 'nameTemplate', kind: 'name-template' },
    { name: 'kubeVersion', kind: 'kube-version' },
    { name: 'valuesFile', kind: 'values-path' },
  ],
  helmChartInflationGenerator: [
    { name: 'releaseName', kind: 'release-name' },
    { name: 'releaseNamespace', kind: 'namespace' },
    { name: 'values', kind: 'values-path' },
  ],
} as const;

function readChart(
  chart: Record_,
  field: string,
  names: { name: string; version: string; repo: string },
  form: keyof typeof CHART_ARGUMENTS,
): ChartRef {
  const [name] = stringField(chart, names.name, field);
  const [version] = stringField(chart, names.version, field);
  const [repo] = stringField(chart, names.repo, field);
  const args: ChartArgument[] = [
    ...(name ? [{ kind: 'chart-name' as const, ...name }] : []),
    ...(version ? [{ kind: 'chart-version' as const, ...version }] : []),
  ];
  for (const { name: key, kind } of CHART_ARGUMENTS[form])
    for (const ref of stringField(chart, key, field)) if (ref.value !== '') args.push({ kind, ...ref });
  if (form === 'helmCharts') {
    for (const ref of stringList(chart, 'additionalValuesFiles', field)) args.push({ kind: 'values-path', ...ref });
    for (const ref of stringList(chart, 'apiVersions', field)) args.push({ kind: 'api-version', ...ref });
  } else
    for (const { key, value } of pick(chart, 'extraArgs'))
      if (!Array.isArray(value) || value.length > 0)
        args.push({ kind: 'extra-args', field: at(field, key), value: JSON.stringify(value) });
  return {
    field,
    ...(name ? { name } : {}),
    ...(version ? { version } : {}),
    ...(repo ? { repo } : {}),
    arguments: args,
  };
}

/** The path-valued fields of one kustomization document (see the list at the top). */
function readDocument(doc: Record_, into: KustomizationReads): void {
  const kinds = stringField(doc, 'kind');
  if (kinds.some((kind) => kind.value === 'Component')) into.isComponent = true;
  into.resources.push(...stringList(doc, 'resources'), ...stringList(doc, 'bases'), ...stringList(doc, 'components'));
  into.plugins.push(
    ...stringList(doc, 'generators'),
    ...stringList(doc, 'transformers'),
    ...stringList(doc, 'validators'),
  );
  into.files.push(...stringList(doc, 'crds'), ...stringList(doc, 'configurations'));
  into.strategicMerge.push(...stringList(doc, 'patchesStrategicMerge'));
  for (const name of ['patches', 'patchesJson6902', 'replacements'])
    for (const { field, record } of recordList(doc, name)) into.files.push(...stringField(record, 'path', field));
  for (const { field, record } of recordField(doc, 'openapi')) into.files.push(...stringField(record, 'path', field));
  for (const name of ['configMapGenerator', 'secretGenerator']) {
    for (const { field, record } of recordList(doc, name))
      into.files.push(
        ...stringList(record, 'files', field),
        ...stringList(record, 'envs', field),
        ...stringField(record, 'env', field),
      );
  }
  for (const { field, record } of recordField(doc, 'helmGlobals')) {
    const [home] = stringField(record, 'chartHome', field);
    if (home) into.chartHome = home;
    into.homes.push(...stringField(record, 'configHome', field));
  }
  for (const { field, record } of recordList(doc, 'helmCharts')) {
    into.charts.push(readChart(record, field, { name: 'name', version: 'version', repo: 'repo' }, 'helmCharts'));
    into.files.push(...stringField(record, 'valuesFile', field), ...stringList(record, 'additionalValuesFiles', field));
  }
  for (const { field, record } of recordList(doc, 'helmChartInflationGenerator')) {
    into.charts.push(
      readChart(
        record,
        field,
        { name: 'chartName', version: 'chartVersion', repo: 'chartRepoUrl' },
        'helmChartInflationGenerator',
      ),
    );
    const [home] = stringField(record, 'chartHome', field);
    if (home) into.chartHome = home;
    into.files.push(...stringField(record, 'values', field));
    into.homes.push(...stringField(record, 'helmHome', field), ...stringField(record, 'helmBin', field));
  }
}

/** Read a kustomization file's text the way kustomize does (every document applied unless `documents: 'first'`). */
export function readKustomization(text: string, options: ReadOptions = {}): ReadOutcome<KustomizationReads> {
  const docs = readYamlMappings(text, options);
  if (!docs.ok) return docs;
  if (docs.value.length === 0) return { ok: false, problem: ' holds no YAML mapping' };
  const reads: KustomizationReads = {
    isComponent: false,
    resources: [],
    plugins: [],
    files: [],
    strategicMerge: [],
    homes: [],
    charts: [],
  };
  try {
    for (const doc of docs.value) readDocument(doc, reads);
  } catch (error) {
    if (error instanceof Unreadable) return { ok: false, problem: ` ${error.message}` };
    throw error;
  }
  return { ok: true, value: reads };
}

/** The path-valued top-level fields of a builtin plugin configuration (`PatchTransformer`, `ConfigMapGenerator`, `HelmChartInflationGenerator`…). */
export function readPluginConfigPaths(
  config: Record_,
): ReadOutcome<{ files: FieldRef[]; homes: FieldRef[]; remote: FieldRef[]; charts: ChartRef[] }> {
  try {
    const files = [
      ...stringField(config, 'path'),
      ...stringList(config, 'paths'),
      ...stringList(config, 'files'),
      ...stringList(config, 'envs'),
      ...stringField(config, 'env'),
      ...stringField(config, 'valuesFile'),
      ...stringList(config, 'additionalValuesFiles'),
    ];
    for (const { field, record } of recordList(config, 'replacements'))
      files.push(...stringField(record, 'path', field));
    const homes = [...stringField(config, 'chartHome'), ...stringField(config, 'configHome')];
    const remote = stringField(config, 'repo');
    // A HelmChartInflationGenerator configuration is a chart whatever its other fields say.
    const inflates = stringField(config, 'kind').some((kind) => foldKey(kind.value) === 'helmchartinflationgenerator');
    const charts =
      stringField(config, 'name').length > 0 && (inflates || homes.length + remote.length > 0)
        ? [readChart(config, '', { name: 'name', version: 'version', repo: 'repo' }, 'helmCharts')]
        : [];
    return { ok: true, value: { files, homes, remote, charts } };
  } catch (error) {
    if (error instanceof Unreadable) return { ok: false, problem: ` ${error.message}` };
    throw error;
  }
}

/**
 * Would kustomize fetch or clone this reference instead of reading a file of the checkout?
 * Conservative: any scheme in any case (`url.Parse` lowercases it; the git loader compares
 * case-insensitively), `git::`, `user@host` (scp form), GitHub/GitLab/Bitbucket hosts, and query strings.
 */
export function isRemoteReference(entry: string): boolean {
  const value = entry
    .trim()
    .toLowerCase()
    .replace(/^git::/, '');
  return (
    /^[a-z][a-z0-9+.-]*:/.test(value) ||
    /^[a-z][a-z0-9-]*@/.test(value) ||
    /^(github\.com|gitlab\.com|bitbucket\.org)[/:]/.test(value) ||
    /\?(ref|version|timeout|submodules)=/.test(value) ||
    /\/\/.*\?/.test(value)
  );
}

/** The paths a generator `files` entry may name: `path` or `key=path` (more `=` is an error to kustomize; every split is checked). */
export function fileSourcePaths(entry: string): string[] {
  const paths = [entry];
  for (let at = entry.indexOf('='); at !== -1; at = entry.indexOf('=', at + 1)) paths.push(entry.slice(at + 1));
  return paths;
}
