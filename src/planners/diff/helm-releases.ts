import { createHash } from 'node:crypto';
import { fieldLine, isExpectedArgument, refuseArguments, type ArgumentRef } from './arguments.js';
import { isKustomizationPath, isRemoteReference, readYamlMappings } from '../kustomize/index.js';
import { shown } from './shown.js';
import { resolvePath } from '../repo-path.js';

/**
 * Helm releases as the GitOps agents define them, read from the repository's YAML, so a chart is
 * rendered with the release name, namespace, values and flags the agent gives it.
 *
 * Argo CD (argoproj/argo-cd reposerver/repository/repository.go `helmTemplate` and
 * `getResolvedValueFiles`, util/helm/cmd.go `template`):
 * - release name: `helm.releaseName`, else the Application's name;
 * - namespace: `helm.namespace`, else `spec.destination.namespace` (`--namespace`);
 * - `helm.valueFiles` relative to the chart's path (a leading `/` is the repository's root;
 *   `$<ref>/…` names a `ref` source of a multi-source Application, whose root is this repository
 *   when it is a git source), then `helm.valuesObject` — or `helm.values` when there is no
 *   valuesObject — as one more `--values` file, last;
 * - `helm.parameters` as `--set` (`--set-string` with `forceString`), commas escaped unless the
 *   value is a `{…}` list, one per name;
 * - `$ARGOCD_APP_*` references in values file paths and parameter values are expanded as Argo CD's
 *   `Env.Envsubst` does (pkg/apis/application/v1alpha1/types.go, `newEnv` in repository.go): the
 *   Application's name, destination namespace, source path, repoURL and targetRevision, and the
 *   commit being rendered; `$$` is a `$`, anything else unknown is empty;
 * - `--include-crds` unless `helm.skipCrds`; `--skip-schema-validation` and `--skip-tests` when set;
 * - `--kube-version` and `--api-versions` come from the destination cluster: Escalator has none,
 *   so helm's built-in defaults apply and a note says so.
 *
 * Flux (fluxcd/helm-controller api/v2/helmrelease_types.go `GetReleaseName`,
 * `GetReleaseNamespace`, `Install.CRDs`; internal/release/name.go `ShortenName`;
 * internal/action/install.go):
 * - release name: `spec.releaseName`, else `<targetNamespace>-<name>` with a target namespace,
 *   else the name; over 53 characters it is cut to 40 and suffixed with 12 hex digits of its sha256;
 * - namespace: `spec.targetNamespace`, else the HelmRelease's namespace;
 * - `spec.chart.spec.valuesFiles` (relative to the GitRepository's root) REPLACE the chart's own
 *   `values.yaml`: source-controller merges them in order into one map and writes it as the
 *   packaged chart's `values.yaml` (fluxcd/source-controller internal/helm/chart/builder_local.go
 *   `Build` → `mergeFileValues`, then `OverwriteChartDefaultValues` in metadata.go), so the
 *   chart's defaults no longer apply. Escalator renders a copy of the chart whose `values.yaml` is
 *   empty, with the files as the first `--values` (helm merges them in order the same way:
 *   later keys win, maps merged) — `chartValuesReplaced`;
 * - then `spec.valuesFrom`
 *   in order (ConfigMaps found as manifests in the repository, or a kustomization's
 *   `configMapGenerator` file, key `valuesKey`, default `values.yaml`; Secrets are never read),
 *   then `spec.values`, each one more `--values` file —
 *   helm merges values files as helm-controller merges these (later keys win, maps merged);
 * - CRDs from the chart's `crds/` unless `install.crds: Skip` (or the deprecated `install.skipCRDs`);
 *   a note says that an upgrade changes CRDs only with `upgrade.crds: Create|CreateReplace`.
 *
 * A chart that is not in this repository (`https://`, `oci://`, a Helm repository, an
 * OCIRepository or HelmChart reference, a path of another Git repository) is never fetched: the
 * release is a target that is not rendered, with the reason in a sentence (never an empty name),
 * and keeps its values for the values diff and image rows. Every Application Helm source and
 * HelmRelease of a file read as whole objects is a release: none is dropped (issue 36).
 * Documents of kustomize patches are not read (`ReleaseTree.wholeObjects`, issue 35).
 */
export interface HelmRelease {
  agent: 'argocd' | 'flux';
  /** The target id: `argocd:<name>` or `flux:<namespace>/<name>`. */
  id: string;
  /** The file that defines the Application or HelmRelease. */
  source: string;
  /** The chart's directory in the repository; undefined for a chart that is not rendered. */
  chart?: string;
  releaseName: string;
  namespace?: string;
  /** Values files of the repository, in order. */
  valuesFiles: string[];
  /**
   * Flux `spec.chart.spec.valuesFiles` is set: the chart's own `values.yaml` is replaced by those
   * files, not layered under them (source-controller `OverwriteChartDefaultValues`).
   */
  chartValuesReplaced?: boolean;
  /** Values given inline (Argo CD values/valuesObject, Flux valuesFrom ConfigMaps and values), in order after the files. */
  inlineValues: Array<{ name: string; text: string }>;
  set: Array<{ name: string; value: string }>;
  setString: Array<{ name: string; value: string }>;
  includeCrds: boolean;
  skipSchemaValidation?: boolean;
  skipTests?: boolean;
  /** Other files the render reads besides the chart (ConfigMap manifests). */
  reads: string[];
  /** Said in the target's notes. */
  notes: string[];
  /** Why the release is not rendered (a remote chart, values Escalator cannot resolve). */
  skip?: string;
  /**
   * Values bound for helm's argument list that are not what helm expects (release name,
   * namespaces, values file paths, parameter names, chart version; src/planners/diff/arguments.ts),
   * each with its file, line and field: the release is refused, whatever else it says.
   */
  arguments?: string[];
}

type Doc = Record<string, unknown>;

function isRecord(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A value as the API server stores it: numbers and booleans of the YAML become strings where Go expects a string. */
function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

export interface ReleaseTree {
  /** The commit being rendered (Argo CD's `$ARGOCD_APP_REVISION`); empty when unknown. */
  revision?: string;
  files: readonly string[];
  dirs: ReadonlySet<string>;
  read: (path: string) => string | undefined;
  isChart: (dir: string) => boolean;
  /**
   * Does kustomize or an agent read this file's documents as whole objects? No for a kustomize
   * patch (`patches[].path`, `patchesStrategicMerge`) that no kustomization takes as a resource,
   * and for a file in a kustomization's directory that its kustomization does not list: a partial
   * HelmRelease in a patch (flux2-kustomize-helm-example `apps/staging/podinfo-values.yaml`) is
   * no release. Absent: every file is.
   */
  wholeObjects?: (file: string) => boolean;
}

const YAML = /\.ya?ml$/i;
const HINT = /argoproj\.io|helm\.toolkit\.fluxcd\.io/;
const NOT_FETCHED = 'charts from remote repositories are never fetched while rendering a pull request';

/** Argo CD escapes commas in `--set` values unless the value is a `{…}` list (util/helm/cmd.go cleanSetParameters). */
export function cleanSetParameter(value: string): string {
  if (value.startsWith('{') && value.endsWith('}')) return value;
  let out = '';
  let previous = '';
  for (const char of value) {
    out += char === ',' && previous !== '\\' ? '\\,' : char;
    previous = char;
  }
  return out;
}

/** helm-controller's release name: cut past 53 characters, with a hash of the whole name (internal/release/name.go). */
export function shortenReleaseName(name: string): string {
  if (name.length <= 53) return name;
  return `${name.slice(0, 53 - 13)}-${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

/** Go's `os.Expand` as Argo CD's `Env.Envsubst` calls it: `$NAME`, `${NAME}`, `$$`; unknown names are empty. */
export function argoEnvsubst(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$(\$|\{([^}]*)\}|([A-Za-z0-9_]+))/g,
    (_match, whole: string, braced?: string, bare?: string) =>
      whole === '$' ? '$' : (env[braced ?? bare ?? ''] ?? ''),
  );
}

/** The `$<ref>` a values file path starts with, when a source of the Application has that ref. */
function refOf(path: string, refs: ReadonlyMap<string, string | undefined>): string | undefined {
  const head = path.startsWith('$') ? path.split('/')[0] : undefined;
  return head !== undefined && refs.has(head) ? head : undefined;
}

function hidden(path: string): boolean {
  return path.split('/').some((segment) => segment.startsWith('.'));
}

interface ConfigMapDoc {
  file: string;
  name: string;
  namespace?: string;
  data: Record<string, unknown>;
  /** A kustomize `configMapGenerator`: each key's file in the repository. */
  files?: Record<string, string>;
}

/** `configMapGenerator` entries of a kustomization as ConfigMaps whose keys are files (`key=path` or `path`). */
function generatedConfigMaps(file: string, doc: Doc): ConfigMapDoc[] {
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  const namespace = text(doc.namespace);
  return (Array.isArray(doc.configMapGenerator) ? doc.configMapGenerator.filter(isRecord) : []).flatMap((entry) => {
    const name = text(entry.name);
    if (!name) return [];
    const files: Record<string, string> = {};
    for (const source of Array.isArray(entry.files) ? entry.files : []) {
      if (typeof source !== 'string') continue;
      const split = source.indexOf('=');
      const path = resolvePath(dir, split >= 0 ? source.slice(split + 1) : source);
      if (path !== undefined) files[split >= 0 ? source.slice(0, split) : path.slice(path.lastIndexOf('/') + 1)] = path;
    }
    const own = text(entry.namespace) ?? namespace;
    return [{ file, name, ...(own ? { namespace: own } : {}), data: {}, files }];
  });
}

/** Every Argo CD Application source and Flux HelmRelease of the tree that deploys a Helm chart. */
export function readHelmReleases(tree: ReleaseTree): HelmRelease[] {
  const releases: HelmRelease[] = [];
  const fluxDocs: Array<{ file: string; doc: Doc; content: string }> = [];
  const yamlFiles = tree.files.filter((file) => YAML.test(file) && !hidden(file) && !file.includes('/templates/'));
  for (const file of yamlFiles) {
    if (tree.wholeObjects && !tree.wholeObjects(file)) continue;
    const content = tree.read(file);
    if (content === undefined || !HINT.test(content)) continue;
    const docs = readYamlMappings(content);
    if (!docs.ok) continue;
    for (const doc of docs.value) {
      const apiVersion = text(doc.apiVersion) ?? '';
      if (apiVersion.startsWith('argoproj.io/') && doc.kind === 'Application')
        releases.push(...argoReleases(tree, file, doc, content));
      else if (apiVersion.startsWith('helm.toolkit.fluxcd.io/') && doc.kind === 'HelmRelease')
        fluxDocs.push({ file, doc, content });
    }
  }
  // ConfigMaps are read only when a HelmRelease takes values from one, and only files that name it.
  const wanted = new Set(
    fluxDocs.flatMap(({ doc }) => {
      const spec = isRecord(doc.spec) ? doc.spec : {};
      return (Array.isArray(spec.valuesFrom) ? spec.valuesFrom.filter(isRecord) : [])
        .filter((ref) => ref.kind === 'ConfigMap' && typeof ref.name === 'string')
        .map((ref) => ref.name as string);
    }),
  );
  const configMaps: ConfigMapDoc[] = [];
  if (wanted.size > 0)
    for (const file of [...new Set([...yamlFiles, ...tree.files.filter((path) => isKustomizationPath(path))])]) {
      const content = tree.read(file);
      if (content === undefined || !/configmap/i.test(content) || ![...wanted].some((name) => content.includes(name)))
        continue;
      const docs = readYamlMappings(content);
      if (!docs.ok) continue;
      for (const doc of docs.value) {
        if (isKustomizationPath(file)) {
          configMaps.push(...generatedConfigMaps(file, doc));
          continue;
        }
        const metadata = isRecord(doc.metadata) ? doc.metadata : {};
        if (doc.apiVersion === 'v1' && doc.kind === 'ConfigMap' && typeof metadata.name === 'string')
          configMaps.push({
            file,
            name: metadata.name,
            ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}),
            data: isRecord(doc.data) ? doc.data : {},
          });
      }
    }
  for (const { file, doc, content } of fluxDocs) {
    const release = fluxRelease(tree, file, doc, configMaps, content);
    if (release) releases.push(release);
  }
  // Two definitions of one name (the same Application in two files): each keeps a target, named by its file.
  const counts = new Map<string, number>();
  for (const release of releases) counts.set(release.id, (counts.get(release.id) ?? 0) + 1);
  for (const release of releases) if ((counts.get(release.id) ?? 0) > 1) release.id = `${release.id}@${release.source}`;
  return releases.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A nonempty string field as an argument to check. */
function argument(kind: ArgumentRef['kind'], field: string, value: unknown): ArgumentRef[] {
  return typeof value === 'string' && value !== '' ? [{ kind, field, value }] : [];
}

function argoReleases(tree: ReleaseTree, file: string, doc: Doc, content: string): HelmRelease[] {
  const metadata = isRecord(doc.metadata) ? doc.metadata : {};
  const name = text(metadata.name);
  if (!name) return [];
  const spec = isRecord(doc.spec) ? doc.spec : {};
  const destination = isRecord(spec.destination) ? spec.destination : {};
  const multi = Array.isArray(spec.sources);
  const sources: Doc[] = multi
    ? (spec.sources as unknown[]).filter(isRecord)
    : isRecord(spec.source)
      ? [spec.source]
      : [];
  /** Where a source is written, for the lines of refusals. */
  const sourceField = (source: Doc): string =>
    multi ? `spec.sources[${(spec.sources as unknown[]).indexOf(source)}]` : 'spec.source';
  // `ref` sources of a multi-source Application: `$<ref>/path` values files (git sources are this repository).
  const refs = new Map<string, string | undefined>();
  for (const source of sources) {
    const ref = text(source.ref);
    if (ref) refs.set(`$${ref}`, text(source.chart) ? undefined : (text(source.repoURL) ?? ''));
  }
  const helmSources = sources.filter((source) => {
    if (text(source.chart)) return true;
    const path = text(source.path);
    if (path === undefined) return false;
    // Argo CD's explicit types win over what the directory holds.
    if (isRecord(source.kustomize) || isRecord(source.directory) || isRecord(source.plugin)) return false;
    const dir = resolvePath('', path.trim());
    // A `helm` source whose path this repository does not hold is a chart of another Git repository: listed, not rendered.
    if (dir === undefined || !tree.dirs.has(dir)) return isRecord(source.helm);
    return isRecord(source.helm) || tree.isChart(dir);
  });
  return helmSources.map((source, index) => {
    const id = `argocd:${name}${helmSources.length > 1 ? `[${index}]` : ''}`;
    const helm = isRecord(source.helm) ? source.helm : {};
    const namespace = text(helm.namespace) || text(destination.namespace) || undefined;
    const revision = tree.revision ?? '';
    const env: Record<string, string> = {
      ARGOCD_APP_NAME: name,
      ARGOCD_APP_NAMESPACE: text(destination.namespace) ?? '',
      ARGOCD_APP_REVISION: revision,
      ARGOCD_APP_REVISION_SHORT: revision.slice(0, 7),
      ARGOCD_APP_SOURCE_REPO_URL: text(source.repoURL) ?? '',
      ARGOCD_APP_SOURCE_PATH: text(source.path) ?? '',
      ARGOCD_APP_SOURCE_TARGET_REVISION: text(source.targetRevision) ?? '',
    };
    const at = `${sourceField(source)}.helm`;
    const args: ArgumentRef[] = [
      ...(text(helm.releaseName)
        ? argument('release-name', `${at}.releaseName`, helm.releaseName)
        : argument('release-name', 'metadata.name', name)),
      ...argument('namespace', `${at}.namespace`, helm.namespace),
      ...argument('namespace', 'spec.destination.namespace', destination.namespace),
    ];
    (Array.isArray(helm.valueFiles) ? helm.valueFiles : []).forEach((written, index) =>
      args.push(...argument('values-path', `${at}.valueFiles[${index}]`, written)),
    );
    (Array.isArray(helm.parameters) ? helm.parameters : []).forEach((parameter, index) => {
      if (isRecord(parameter))
        args.push(...argument('parameter-name', `${at}.parameters[${index}].name`, parameter.name));
    });
    const refused = refuseArguments(file, content, args);
    const release: HelmRelease = {
      agent: 'argocd',
      id,
      source: file,
      releaseName: text(helm.releaseName) || name,
      ...(namespace ? { namespace } : {}),
      valuesFiles: [],
      inlineValues: [],
      set: [],
      setString: [],
      includeCrds: helm.skipCrds !== true,
      ...(helm.skipSchemaValidation === true ? { skipSchemaValidation: true } : {}),
      ...(helm.skipTests === true ? { skipTests: true } : {}),
      reads: [],
      ...(refused.length > 0 ? { arguments: refused } : {}),
      notes: [
        'Argo CD also passes the cluster’s Kubernetes version and API versions (`--kube-version`, `--api-versions`); Escalator has no cluster, so helm’s defaults stand in for them.',
      ],
    };
    const chartName = text(source.chart);
    if (chartName) {
      // Values the repository holds (`$values/…` of a git ref source) still make a change to them name this release.
      for (const written of Array.isArray(helm.valueFiles) ? helm.valueFiles : []) {
        if (typeof written !== 'string') continue;
        const refName = refOf(written, refs);
        const refRepo = refName === undefined ? undefined : refs.get(refName);
        const path =
          refRepo && !/^oci:\/\//i.test(refRepo)
            ? resolvePath('', argoEnvsubst(written.slice((refName ?? '').length + 1), env))
            : undefined;
        if (path !== undefined) release.valuesFiles.push(path);
      }
      const repo = text(source.repoURL) ?? '';
      release.skip = `the chart ${chartName}${text(source.targetRevision) ? ` ${text(source.targetRevision)}` : ''} comes from ${repo || 'a Helm repository'}; ${NOT_FETCHED}`;
      return withArgoInlineValues(release, helm);
    }
    const written = (text(source.path) ?? '').trim();
    const chart = resolvePath('', written);
    if (chart === undefined || !tree.dirs.has(chart)) {
      // Values files of a `$ref` git source of this repository still make a change to them name this release.
      for (const value of Array.isArray(helm.valueFiles) ? helm.valueFiles : []) {
        const refName = typeof value === 'string' ? refOf(value, refs) : undefined;
        const refRepo = refName === undefined ? undefined : refs.get(refName);
        const path =
          refRepo && !/^oci:\/\//i.test(refRepo)
            ? resolvePath('', argoEnvsubst((value as string).slice((refName ?? '').length + 1), env))
            : undefined;
        if (path !== undefined) release.valuesFiles.push(path);
      }
      const repo = text(source.repoURL)?.trim() ?? '';
      release.skip = `its chart (path ${written || '.'}${repo ? ` of ${repo}` : ''}) is not in this repository; charts in other Git repositories are never fetched while rendering a pull request`;
      return withArgoInlineValues(release, helm);
    }
    release.chart = chart;
    const missing: string[] = [];
    for (const [index, written] of (Array.isArray(helm.valueFiles) ? helm.valueFiles : []).entries()) {
      if (typeof written !== 'string') continue;
      // A `$<ref>/` prefix is resolved before the rest is expanded (argo-cd getResolvedValueFiles).
      const refName = refOf(written, refs);
      const raw = refName === undefined ? argoEnvsubst(written, env) : written;
      let path: string | undefined;
      if (refName !== undefined) {
        const repo = refs.get(refName);
        if (repo === undefined || /^oci:\/\//i.test(repo)) {
          release.skip = `the values file ${raw} comes from a Helm chart source; ${NOT_FETCHED}`;
          return release;
        }
        path = resolvePath('', argoEnvsubst(raw.slice(refName.length + 1), env));
      } else if (isRemoteReference(raw)) {
        const field = `${at}.valueFiles[${index}]`;
        release.skip = `the values file ${raw} (${file} line ${fieldLine(content, field, written)} ${field}) is remote; values files are never fetched while rendering a pull request`;
        return release;
      } else path = raw.startsWith('/') ? resolvePath('', raw.slice(1)) : resolvePath(chart, raw);
      if (path === undefined) {
        // Argo CD refuses it too ("outside repository root"): a refusal, with where it is written.
        const field = `${at}.valueFiles[${index}]`;
        (release.arguments ??= []).push(
          `${file} line ${fieldLine(content, field, written)} ${field}: ${shown(written)} is not a path inside the repository`,
        );
        return release;
      }
      if (!tree.files.includes(path) && helm.ignoreMissingValueFiles === true) {
        missing.push(raw);
        continue;
      }
      release.valuesFiles.push(path);
    }
    if (missing.length > 0)
      release.notes.push(`Missing values files ignored (ignoreMissingValueFiles): ${missing.join(', ')}.`);
    withArgoInlineValues(release, helm);
    const set = new Map<string, string>();
    const setString = new Map<string, string>();
    for (const parameter of Array.isArray(helm.parameters) ? helm.parameters.filter(isRecord) : []) {
      const key = text(parameter.name);
      const value = argoEnvsubst(scalar(parameter.value) ?? '', env);
      if (!key) continue;
      (parameter.forceString === true ? setString : set).set(key, value);
    }
    const sorted = (map: Map<string, string>): Array<{ name: string; value: string }> =>
      [...map]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => ({ name: key, value: cleanSetParameter(value) }));
    release.set = sorted(set);
    release.setString = sorted(setString);
    if (Array.isArray(helm.fileParameters) && helm.fileParameters.length > 0)
      release.skip = 'helm.fileParameters are not rendered by Escalator yet';
    return release;
  });
}

/** `helm.valuesObject`, or `helm.values` when there is none, as the release's last values (argo-cd repository.go). */
function withArgoInlineValues(release: HelmRelease, helm: Doc): HelmRelease {
  if (isRecord(helm.valuesObject))
    release.inlineValues.push({ name: 'helm.valuesObject', text: JSON.stringify(helm.valuesObject) });
  else if (typeof helm.values === 'string' && helm.values.trim() !== '')
    release.inlineValues.push({ name: 'helm.values', text: helm.values });
  return release;
}

function fluxRelease(
  tree: ReleaseTree,
  file: string,
  doc: Doc,
  configMaps: ConfigMapDoc[],
  content: string,
): HelmRelease | undefined {
  const metadata = isRecord(doc.metadata) ? doc.metadata : {};
  const name = text(metadata.name);
  if (!name) return undefined;
  const objectNamespace = text(metadata.namespace);
  const spec = isRecord(doc.spec) ? doc.spec : {};
  const targetNamespace = text(spec.targetNamespace) || undefined;
  const namespace = targetNamespace ?? objectNamespace;
  const install = isRecord(spec.install) ? spec.install : {};
  const chartSpec0 = isRecord(spec.chart) && isRecord(spec.chart.spec) ? spec.chart.spec : {};
  // helm-controller's API limits releaseName to 53 and the namespaces to 63 characters
  // (api/v2/helmrelease_types.go); helm and Kubernetes say which characters.
  const args: ArgumentRef[] = [
    ...(text(spec.releaseName)
      ? argument('release-name', 'spec.releaseName', spec.releaseName)
      : isExpectedArgument('release-name', shortenReleaseName(targetNamespace ? `${targetNamespace}-${name}` : name))
        ? []
        : argument('release-name', 'metadata.name', name)),
    ...argument('namespace', 'metadata.namespace', objectNamespace),
    ...argument('namespace', 'spec.targetNamespace', spec.targetNamespace),
    ...argument('namespace', 'spec.storageNamespace', spec.storageNamespace),
    ...argument('chart-version', 'spec.chart.spec.version', chartSpec0.version),
  ];
  (Array.isArray(chartSpec0.valuesFiles) ? chartSpec0.valuesFiles : []).forEach((written, index) =>
    args.push(...argument('values-path', `spec.chart.spec.valuesFiles[${index}]`, written)),
  );
  const refused = refuseArguments(file, content, args);
  const release: HelmRelease = {
    agent: 'flux',
    id: `flux:${objectNamespace ? `${objectNamespace}/` : ''}${name}`,
    source: file,
    releaseName: shortenReleaseName(text(spec.releaseName) || (targetNamespace ? `${targetNamespace}-${name}` : name)),
    ...(namespace ? { namespace } : {}),
    valuesFiles: [],
    inlineValues: [],
    set: [],
    setString: [],
    includeCrds: install.crds !== 'Skip' && install.skipCRDs !== true,
    ...(install.disableSchemaValidation === true ? { skipSchemaValidation: true } : {}),
    reads: [],
    notes: [],
    ...(refused.length > 0 ? { arguments: refused } : {}),
  };
  const chartRef = isRecord(spec.chartRef) ? spec.chartRef : undefined;
  const chartSpec = isRecord(spec.chart) && isRecord(spec.chart.spec) ? spec.chart.spec : undefined;
  const sourceRef = chartSpec && isRecord(chartSpec.sourceRef) ? chartSpec.sourceRef : {};
  const chartName = (chartSpec ? text(chartSpec.chart) : undefined)?.trim() ?? '';
  // A GitRepository is taken as this repository (as for deployed directories); a chart path it does not hold is another repository's.
  const chart = chartSpec && sourceRef.kind === 'GitRepository' ? resolvePath('', chartName) : undefined;
  if (chartRef) release.skip = `the chart comes from ${sourceWords(chartRef)}; ${NOT_FETCHED}`;
  else if (!chartSpec)
    release.skip =
      'it names no chart (neither spec.chart.spec nor spec.chartRef), so there is nothing to render; helm-controller would refuse it too';
  else if (sourceRef.kind !== 'GitRepository')
    release.skip = `${chartWords(chartName, text(chartSpec.version))} comes from ${sourceWords(sourceRef)}; ${NOT_FETCHED}`;
  else if (chart === undefined || chart === '' || !tree.isChart(chart))
    release.skip =
      chartName === ''
        ? `it names no chart path in ${sourceWords(sourceRef)}, so there is nothing to render`
        : `the chart path ${chartName} of ${sourceWords(sourceRef)} is not a chart directory of this repository (that GitRepository is another repository, or the chart is missing); charts in other Git repositories are never fetched while rendering a pull request`;
  // Not rendered: its values (ConfigMaps, inline) are still read, for the values diff and the image rows.
  if (release.skip !== undefined || !chartSpec) return withFluxValues(tree, release, spec, configMaps, objectNamespace);
  release.chart = chart as string;
  // helm-controller's upgrade CRD policy defaults to Skip: CRD changes reach a cluster that already
  // runs the release only with upgrade.crds Create or CreateReplace (api/v2 Upgrade.CRDs).
  const upgrade = isRecord(spec.upgrade) ? spec.upgrade : {};
  if (
    release.includeCrds &&
    upgrade.crds !== 'Create' &&
    upgrade.crds !== 'CreateReplace' &&
    tree.files.some((file) => file.startsWith(`${chart}/crds/`))
  )
    release.notes.push(
      'CRDs are shown as an install creates them; on an upgrade Flux changes no CRD unless upgrade.crds is Create or CreateReplace.',
    );
  // Any valuesFiles at all replace the chart's values.yaml, even when every one is missing and
  // ignored: source-controller then writes an empty values.yaml (mergeFileValues starts from {}).
  if (Array.isArray(chartSpec.valuesFiles) && chartSpec.valuesFiles.length > 0) {
    release.chartValuesReplaced = true;
    release.notes.push(
      "spec.chart.spec.valuesFiles replace the chart's own values.yaml, as Flux packages the chart: rendered without the chart's defaults.",
    );
  }
  for (const [index, raw] of (Array.isArray(chartSpec.valuesFiles) ? chartSpec.valuesFiles : []).entries()) {
    if (typeof raw !== 'string') continue;
    const path = isRemoteReference(raw) ? undefined : resolvePath('', raw.trim());
    if (path === undefined) {
      // A path of the GitRepository: outside it, or a URL (Flux would read a file by that name), is refused where it is written.
      const field = `spec.chart.spec.valuesFiles[${index}]`;
      (release.arguments ??= []).push(
        `${file} line ${fieldLine(content, field, raw)} ${field}: ${shown(raw)} is not a path inside the repository`,
      );
      return release;
    }
    if (!tree.files.includes(path) && chartSpec.ignoreMissingValuesFiles === true) continue;
    release.valuesFiles.push(path);
  }
  withFluxValues(tree, release, spec, configMaps, objectNamespace);
  if (Array.isArray(spec.postRenderers) && spec.postRenderers.length > 0)
    release.notes.push('spec.postRenderers are not applied: the objects are shown as the chart renders them.');
  return release;
}

/**
 * `spec.valuesFrom` ConfigMaps, then `spec.values`, as inline values of the release, in order. A
 * release that is not rendered keeps them too: its values diff and image rows come from them.
 */
function withFluxValues(
  tree: ReleaseTree,
  release: HelmRelease,
  spec: Doc,
  configMaps: ConfigMapDoc[],
  objectNamespace: string | undefined,
): HelmRelease {
  for (const ref of Array.isArray(spec.valuesFrom) ? spec.valuesFrom.filter(isRecord) : []) {
    const kind = text(ref.kind);
    const refName = text(ref.name) ?? '';
    const key = text(ref.valuesKey) || 'values.yaml';
    if (kind === 'Secret') {
      release.notes.push(
        `Rendered without the values of the Secret ${refName}: Escalator never reads Secrets, so what they set is not shown.`,
      );
      continue;
    }
    if (kind !== 'ConfigMap') continue;
    if (text(ref.targetPath)) {
      release.skip ??= `valuesFrom ConfigMap ${refName} sets targetPath, which Escalator does not render yet`;
      return release;
    }
    const found = configMaps.find(
      (map) => map.name === refName && (map.namespace ?? objectNamespace) === objectNamespace,
    );
    const generated = found?.files?.[key];
    const value = generated !== undefined ? tree.read(generated) : found ? scalar(found.data[key]) : undefined;
    if (!found || value === undefined) {
      if (ref.optional === true) {
        release.notes.push(
          `The optional ConfigMap ${refName} (key ${key}) is not in the repository; rendered without it.`,
        );
        continue;
      }
      release.skip ??= `its values come from the ConfigMap ${refName} (key ${key}), which is neither a ConfigMap manifest nor a configMapGenerator file in the repository`;
      return release;
    }
    release.reads.push(found.file, ...(generated !== undefined ? [generated] : []));
    release.inlineValues.push({ name: `ConfigMap ${refName} ${key}`, text: value });
  }
  if (isRecord(spec.values)) release.inlineValues.push({ name: 'spec.values', text: JSON.stringify(spec.values) });
  return release;
}

/** A Flux source reference in words: "the HelmRepository podinfo", "an OCIRepository", never an empty name. */
function sourceWords(ref: Doc): string {
  const kind = text(ref.kind)?.trim() ?? '';
  const name = text(ref.name)?.trim() ?? '';
  if (kind !== '' && name !== '') return `the ${kind} ${name}`;
  if (kind !== '') return `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind} it does not name`;
  if (name !== '') return `the source ${name}`;
  return 'a source it does not name';
}

/** "the chart podinfo 6.5.0"; "its chart (version >=1.0.0)" when the name is empty. */
function chartWords(name: string, version: string | undefined): string {
  const v = version?.trim() ?? '';
  if (name === '') return v === '' ? 'its chart' : `its chart (version ${v})`;
  return v === '' ? `the chart ${name}` : `the chart ${name} ${v}`;
}

/**
 * The flags of `helm template` for a release, before `-- <release> <chart>`. Each value is joined
 * to its flag (`--namespace=<ns>`), so no value is ever read as a flag of its own. `filePath`
 * says where helm reads a values file of the repository (`./<path>` in the checkout).
 */
export function releaseTemplateArgs(
  release: HelmRelease,
  valuesPath: (index: number) => string,
  filePath: (file: string) => string = (file) => `./${file}`,
): string[] {
  return [
    ...(release.namespace ? [`--namespace=${release.namespace}`] : []),
    ...release.valuesFiles.map((file) => `--values=${filePath(file)}`),
    ...release.inlineValues.map((_, index) => `--values=${valuesPath(index)}`),
    ...release.set.map(({ name, value }) => `--set=${name}=${value}`),
    ...release.setString.map(({ name, value }) => `--set-string=${name}=${value}`),
    ...(release.includeCrds ? ['--include-crds'] : []),
    ...(release.skipSchemaValidation ? ['--skip-schema-validation'] : []),
    ...(release.skipTests ? ['--skip-tests'] : []),
  ];
}
