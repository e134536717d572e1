/** Public types of the image editor. */

/** A new image version to write: `{repository: 'ghcr.io/example/hello', tag: '1.2.3', digest: 'sha256:…'}`. */
export interface ImageEvent {
  /** Repository in any spelling (`nginx`, `docker.io/library/nginx`); compared normalized. */
  repository: string;
  /** The new tag; must be a valid Docker tag. */
  tag: string;
  /** The new manifest digest, when known; written where the file pins one (or with `pinDigest`). */
  digest?: string;
}

/** How to edit one file. */
export interface EditOptions {
  /** The file's path in the repository; decides the format together with the content. */
  path: string;
  /** Add a digest where the file does not pin one yet. @default false */
  pinDigest?: boolean;
  /**
   * The ways kustomize renders this file (see `kustomizeViews`), when kustomizations among the
   * files being edited list it. Absent or empty: the file renders as written.
   */
  views?: readonly RenderView[];
  /**
   * The other kustomization files in this file's directory (see `kustomizationSiblings`).
   * kustomize refuses to build a directory holding more than one, so a kustomization with
   * siblings that mentions the image is refused, never edited. Absent or empty: none.
   */
  siblings?: readonly string[];
  /**
   * Where the new version comes from, for the words of refusals: a registry `event` (the App), the
   * `command-line` (`escalator set-image`), the environment a `promotion` reads, or the versions on
   * record a `rollback` goes back to. @default 'event'
   */
  origin?: 'event' | 'command-line' | 'promotion' | 'rollback';
  /**
   * Flux image policies (`<namespace>:<name>`, as setter markers name them) and the image each one
   * sets (`images[].fluxPolicies`). A marked field whose policy is listed is the event's site when
   * the policy's image is the event's image, whatever repository its text names (a `:name` field
   * and a full reference are rewritten to that image); a marked field of another policy is left
   * alone even when it names the event's repository. Policies not listed: the image in the field.
   */
  fluxPolicies?: Readonly<Record<string, string>>;
  /**
   * Edit literal dotted keys (`image.tag: 1.2.3` as one key, with `image.repository` or
   * `image.name` beside it) of the event's image, for charts that read such keys
   * (`images[].helmDottedKeys`). Otherwise they are reported with their line, never edited.
   * @default false
   */
  dottedKeys?: boolean;
}

/** One value written into the file. */
export interface EditChange {
  /** YAML path of the value: `images[0].newTag`, `[2].spec.template.spec.containers[1].image`. */
  path: string;
  /** 1-based line of the value in the edited text. */
  line: number;
  /** The previous value (`''` when the key was added). */
  from: string;
  /** The new value. */
  to: string;
}

/** Why the file was left untouched. */
export interface EditRefusal {
  /** What happened and what to do about it. */
  reason: string;
  /** 1-based line the refusal is about, when there is one. */
  line?: number;
}

/** The format the editor recognized. */
export type FileKind = 'kustomize' | 'helm-values' | 'manifest' | 'argocd-application' | 'argocd-source' | 'unknown';

/** The outcome of {@link editImages}. */
export interface EditResult {
  /** The edited text; byte-identical to the input when nothing changed or anything was refused. */
  text: string;
  /** The format the file was read as. */
  kind: FileKind;
  /** Whether the file references the event's image at all. */
  mentions: boolean;
  /** The values written; empty when refused. */
  changed: EditChange[];
  /** True when the image is present, nothing was refused and nothing needed to change. */
  unchanged: boolean;
  /** Why the file was left untouched; empty when the edit went through. */
  refused: EditRefusal[];
  /**
   * Entries (and template documents) left as they were while the rest of the file was edited,
   * each with its line and why: a bad entry does not hold back the good ones when the proof
   * still shows only the intended values moved. Empty unless `changed` is non-empty; when nothing
   * could be edited the same reasons are in `refused` instead.
   */
  left: EditRefusal[];
}

/** One image reference found in a file. */
export interface ImageUse {
  /** Normalized repository name: `docker.io/library/nginx`. */
  name: string;
  /** The repository as the file spells it: `nginx`. */
  written: string;
  /** The tag the file sets, when it sets one. */
  tag?: string;
  /** The digest the file pins, when it pins one. */
  digest?: string;
  /** YAML path of the value that carries the version (tag field or image string). */
  path: string;
  /** 1-based line of that value. */
  line: number;
  /** The format of the document the use was found in. */
  kind: FileKind;
}

/**
 * One `images:` entry that renames an image, or sets its version: an entry without `newName` that
 * sets `newTag` or `digest` is listed as a rename to its own `name`, since the version the
 * resources write does not render through it either.
 */
export interface KustomizeRename {
  /** The kustomization file the entry is in. */
  kustomization: string;
  /** The entry's place in that file: `images[2]`. */
  entry: string;
  /** The image name the entry matches, as kustomize compares it (the text before `:`/`@`). */
  name: string;
  /** The name the image renders as. */
  newName: string;
  /** Whether the entry also sets the version (newTag, digest, or a version inside newName). */
  setsVersion: boolean;
}

/** One way a file is rendered: from the root kustomization `root`, with these renames applied. */
export interface RenderView {
  root: string;
  renames: KustomizeRename[];
}
