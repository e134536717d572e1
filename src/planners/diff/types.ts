/**
 * The data of a rendered-manifest diff (issue 6). Everything here is safe to print: Secret values
 * never enter these types, only key names and byte counts, and failure messages are scrubbed
 * before they are stored.
 */

import type { HelmRelease } from './helm-releases.js';

/** How a target is rendered. */
export type TargetKind = 'kustomize' | 'helm' | 'plain';

/** A thing we render on its own: a kustomization directory, a Helm chart with values, or plain manifests. */
export interface Target {
  /** Stable id shown to readers: the directory, or the values file / manifest file for file targets. */
  id: string;
  kind: TargetKind;
  /** The directory the target lives in (kustomization root, chart directory, manifest directory). */
  dir: string;
  /** Helm: values files applied on top of the chart's own `values.yaml`, in order. */
  valuesFiles?: string[];
  /** Plain targets that are one file rather than a directory. */
  file?: string;
}

/** A target with what it reads, from the dependency graph. */
export interface TargetNode extends Target {
  /** Files the render reads. */
  inputFiles: string[];
  /** Directories every file of which may be read (conservative). */
  inputDirs: string[];
  /** Why the graph may be incomplete for this target (parse errors, unresolved references). */
  unsure: string[];
  /** Remote resources the kustomization references (`https://…`, `git@…`, `github.com/…?ref=`). */
  remote: string[];
  /** Kustomize: the `helmCharts` entries among `remote` (a chart repository and the chart's name). */
  remoteCharts?: string[];
  /**
   * The entries among `remote` that are dependencies of a chart in the repository, from a chart
   * repository and not vendored under its `charts/`: like a remote chart, the target is not rendered (with why).
   */
  remoteDependencies?: string[];
  /** Generator or transformer configurations that would run exec or container plugins. */
  plugins: string[];
  /** References that leave the repository (`../` past its root, absolute paths, symbolic links out). */
  outside?: string[];
  /** Kustomize: the kustomization inflates Helm charts (`helmCharts`), so it needs `--enable-helm`. */
  needsHelm?: boolean;
  /**
   * Files the pre-check cannot read the way kustomize or helm reads them (a parse error, not
   * UTF-8, over the YAML limits, a field of an unexpected type), each with the file and why:
   * what they make the tool read is unknown, so the target is refused.
   */
  unreadable?: string[];
  /**
   * Values of the repository bound for helm's argument list (release names, namespaces, versions,
   * name templates, values paths) that are not what helm expects, each with its file, line and
   * field (src/planners/diff/arguments.ts): the target is refused before any tool runs.
   */
  arguments?: string[];
  /** Subchart archives (`charts/*.tgz`) the render reads; the adapter checks what they hold before helm runs. */
  archives?: string[];
  /**
   * Helm: the chart directories its `file://` dependencies name, inside the repository. Their
   * files are inputs of the target, so a change to a dependency renders every chart that uses it.
   */
  dependencyDirs?: string[];
  /**
   * Helm: `file://` dependencies not vendored under `charts/`, which the agents build before they
   * render (Argo CD runs `helm dependency build` on a missing dependency, Flux's source-controller
   * adds local dependencies when it packages the chart): the adapter runs `helm dependency build`
   * in the render sandbox first.
   */
  buildDependencies?: string[];
  /** Kustomize: symbolic links among or on the way to its inputs that lead out of the repository. */
  linksOut?: string[];
  /** The graph was built knowing which paths are symbolic links, and followed them. */
  linksFollowed?: boolean;
  /**
   * Helm: the chart is deployed as this release by an Argo CD Application or a Flux HelmRelease
   * (src/planners/diff/helm-releases.ts), and is rendered the way that agent renders it.
   */
  release?: HelmRelease;
}

/** The identity Kubernetes uses for an object, without the version. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Why two objects with different identities were paired as one. */
export type RenameReason = 'hash-suffix' | 'namespace' | 'api-group' | 'similarity';

/** What happens to one object. */
export type ChangeKind = 'added' | 'removed' | 'changed' | 'renamed';

/** What happens to one key of a Secret. Values are never kept, only their sizes in bytes. */
export interface SecretKeyChange {
  key: string;
  change: 'added' | 'removed' | 'changed';
  fromBytes?: number;
  toBytes?: number;
}

/** One object's change inside a target. */
export interface ObjectChange extends ObjectRef {
  change: ChangeKind;
  /** apiVersion at head (at base for removed objects). */
  apiVersion: string;
  /** For renames and apiVersion changes: where the object came from. */
  from?: { apiVersion: string; group: string; namespace: string; name: string };
  renameReason?: RenameReason;
  /** Unified diff hunks of the normalized objects, each starting with its `@@` line (YAML path in the header). */
  hunks: string[];
  /** The change was too large to diff line by line (`hunks` is empty): how many lines differ, counted without order. */
  tooLarge?: { removed: number; added: number };
  /** Secret keys that changed (Secrets only). */
  secretKeys?: SecretKeyChange[];
  /** The pod template of a workload changed: applying this starts a rollout. */
  rollout?: boolean;
}

/** A change a reviewer should look at twice. `detail` is plain text; renderers escape it. */
export interface Alert {
  level: 'caution' | 'warning';
  kind: 'render-failure' | 'deletion' | 'immutable-field' | 'recreate' | 'tool-missing' | 'refused';
  target: string;
  object?: ObjectRef;
  field?: string;
  detail: string;
}

/** An image that a container runs differently at head. */
export interface ImageChange {
  target: string;
  object: ObjectRef;
  container: string;
  from?: string;
  to?: string;
}

/** Which side failed to render. */
export interface RenderFailure {
  /** Where it failed; `diff`: both sides rendered, but diffing them was stopped (time or memory). */
  side: 'base' | 'head' | 'both' | 'diff';
  /** Only at head: "this PR breaks it". */
  breaks: boolean;
  /** Scrubbed error text (head's when head failed, else base's). */
  message: string;
}

/**
 * Outcome of diffing one target. `not-rendered`: Escalator could not look (a tool is missing, the
 * run's cap on targets was reached), so nothing is known about what it changes — never "unchanged".
 */
export type TargetStatus = 'changed' | 'unchanged' | 'failed' | 'not-rendered';

export interface TargetCounts {
  added: number;
  changed: number;
  removed: number;
  /** Kustomize hash-suffix renames (a generated ConfigMap or Secret whose input changed): benign. */
  renamed: number;
  /** Renames that delete the old object and create a new one (namespace moves, similar content under a new name). */
  recreated: number;
  unchanged: number;
}

export interface TargetDiff {
  id: string;
  kind: TargetKind;
  status: TargetStatus;
  /** The target exists only at head (`added`) or only at base (`removed`). */
  presence: 'both' | 'added' | 'removed';
  failure?: RenderFailure;
  /** Why the target was not rendered (status `not-rendered`), in plain text: "helm is not installed where Escalator renders". */
  notRendered?: string;
  /**
   * A target that was not rendered because helm is missing: what changed in its values files, as
   * pseudo-objects (kind `ValuesFile`). Inputs, not objects: never counted as objects.
   */
  values?: ObjectChange[];
  /** Plain-text notes (helm missing, structural values diff, duplicates). */
  notes: string[];
  /**
   * What helm renders differently on every render (template randomness, src/planners/diff/random.ts),
   * at base and at head: left out of the comparison or compared with the random fields masked,
   * and said once in the notes, never counted as a change.
   */
  random?: RandomObject[];
  objects: ObjectChange[];
  counts: TargetCounts;
  images: ImageChange[];
  alerts: Alert[];
}

export interface DiffSummary {
  targetsChecked: number;
  targetsChanged: number;
  targetsUnchanged: number;
  targetsFailed: number;
  /** Targets Escalator could not look at (status `not-rendered`). */
  targetsNotRendered: number;
  added: number;
  changed: number;
  removed: number;
  renamed: number;
  recreated: number;
  secretsChanged: number;
  /** Targets that fail to render at head, or whose diff was stopped: what fails the check. */
  failures: number;
}

/** Timings and counters of one run; never part of the comment or the JSON (they are not deterministic). */
export interface DiffStats {
  totalMs: number;
  /** Wall time spent waiting for kustomize / helm child processes. */
  toolMs: number;
  /** Wall time spent writing checkouts (`git archive | tar -x`). */
  checkoutMs: number;
  renders: number;
  renderCacheHits: number;
  checkoutsMaterialized: number;
}

/** The whole diff: what `renderComment`, `renderCheckSummary` and the JSON output read. */
export interface DiffReport {
  version: 1;
  baseSha: string;
  headSha: string;
  targets: TargetDiff[];
  summary: DiffSummary;
  alerts: Alert[];
  images: ImageChange[];
  /** Run-wide notes in plain text (unplaced changed files, refused targets). */
  notes: string[];
  stats?: DiffStats;
  /**
   * Where each affected target lives and which changed paths reach it, when the changed paths are
   * known: what tells which environments a change reaches at once (shared-change.ts). Not part of
   * the JSON report (it repeats the graph, not the diff).
   */
  reach?: TargetReach[];
}

/** One affected target: where it lives and which of the changed paths it reads. */
export interface TargetReach {
  id: string;
  /**
   * The paths that are the target, matched against environments' paths: its id (directory,
   * file or values file), the kustomization file of its directory, its values files, and for a
   * release the Application or HelmRelease that defines it and the values files it names.
   */
  at: string[];
  /** The changed paths it reads, sorted. */
  reads: string[];
}

/** An object (or several from one template) that differs between two renders of the same inputs. */
export interface RandomObject extends Omit<ObjectRef, 'name'> {
  /** The template it comes from (helm's `# Source:` line), or `the chart`. */
  source: string;
  /** Its name, when only its values are random. */
  name?: string;
  /** How many objects of this kind the template renders with random names. */
  count: number;
  /** `name`: its identity differs between renders (left out); `values`: its content does. */
  what: 'name' | 'values';
  /** A Helm test hook (left out whole, whatever differs). */
  testHook: boolean;
  /** The fields masked as random (objects compared with them masked). */
  fields?: string[];
}

/** What a renderer produced for one side of one target. */
export type RenderOutcome =
  | {
      status: 'ok';
      yaml: string;
      notes?: string[];
      /** A second render of the same inputs, when the chart uses template randomness: what differs is random. */
      again?: string;
    }
  | { status: 'absent' }
  | { status: 'failed'; message: string }
  | { status: 'tool-missing'; tool: string; message: string; values?: Array<{ path: string; text: string }> };
