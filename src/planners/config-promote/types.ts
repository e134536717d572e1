/**
 * Configuration promotion (docs/configuration.md, "Promote configuration"): a change merged into
 * environment X's files is carried to environment Y (Y.from = X) by meaning, three-way and
 * byte-exact. These are the planner's input and output; `planConfigPromotion` in `./index.ts`
 * is the one entry point. Pure: text in, text and notes out.
 */

/** One file of an app's environment folder at the three points a three-way promotion reads. */
export interface ConfigFileInput {
  /** Path relative to the app's folder in the environment (`kustomization.yaml`, `patches/env.yaml`). */
  path: string;
  /** X's file before the change; undefined when the change created it. */
  sourceBefore: string | undefined;
  /** X's file after the change; undefined when the change deleted it. */
  sourceAfter: string | undefined;
  /** Y's file now; undefined when Y has none. */
  target: string | undefined;
}

/** One edit applied to Y's file, as a reviewer reads it. */
export interface ConfigEdit {
  /** The YAML path, list items named as kustomize and Kubernetes identify them: `spec.template.spec.containers[name=app].env[name=LOG_LEVEL].value`. */
  path: string;
  kind: 'set' | 'add' | 'remove';
  /** The value before, as written in Y (absent for `add`). */
  from?: string;
  /** The value after, as written in Y's new text (absent for `remove`). */
  to?: string;
  /** 1-based line in Y's new text (for `remove`, in Y's text before). */
  line: number;
}

/** A value Y keeps because Y holds its own, not what X held before the change. */
export interface KeptValue {
  path: string;
  /** Y's value, as written in Y. */
  target: string;
  /** X's value before and after the change; absent where X had no such key. */
  sourceBefore?: string;
  sourceAfter?: string;
  /** 1-based line in Y's text (where Y lacks the path: the line of the part of it Y has). */
  line: number;
  /** Set when Y has no value at the path at all (`target` is then empty): Y keeps not having it. */
  absent?: true;
}

/** What cannot be mapped, with the line it is about; the file is not written. */
export interface ConfigRefusal {
  /** Which file the line is in: X's file after the change, X's before, or Y's. */
  file: 'sourceAfter' | 'sourceBefore' | 'target';
  /** 1-based line. */
  line: number;
  /** What happened and what to do next. */
  reason: string;
}

export interface ConfigFilePlan {
  path: string;
  /**
   * `edited`/`created`/`deleted`: write `text` (or delete the file) in Y; `unchanged`: X's change
   * is already in Y or changes nothing there; `kept`: every edit met a value Y keeps;
   * `refused`: something could not be mapped, nothing of this file is written.
   */
  outcome: 'edited' | 'created' | 'deleted' | 'unchanged' | 'kept' | 'refused';
  /** Y's new text, for `edited` and `created`. */
  text?: string;
  edits: ConfigEdit[];
  kept: KeptValue[];
  refusals: ConfigRefusal[];
}

export interface ConfigPromotionPlan {
  files: ConfigFilePlan[];
}
