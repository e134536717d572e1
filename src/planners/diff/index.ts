/**
 * Rendered-manifest diff (issue 6), the pure part: which targets a change touches, how objects are
 * identified, paired, normalized and diffed, what is risky, and the markdown reviewers read.
 */
export type * from './types.js';
export {
  discoverTargets,
  affectedTargets,
  touches,
  kustomizationFile,
  isRemoteReference,
  resolvePath,
  type TreeView,
  type AffectedTargets,
} from './targets.js';
export { parseManifests, identityKey, groupOf, describeRef, type ManifestObject } from './manifest.js';
export { normalizeObject, normalizeValue, isSecret, LAST_APPLIED } from './normalize.js';
export { diffLines } from './object-diff.js';
export { pairObjects, similarity, HASH_SUFFIX } from './pairing.js';
export { changeAlerts, deletionLoss, removalAlerts } from './risk.js';
export { containerImages, imageChanges, rollsOut } from './workloads.js';
export { secretStringsFromObjects, secretStringsFromSources, scrubText } from './scrub.js';
export { diffValuesFiles, compareSecretKeys, valuesImageChanges } from './values.js';
export {
  diffSides,
  diffTarget,
  notRenderedDiff,
  stoppedDiff,
  type DiffSide,
  type DiffTargetOptions,
  type PlainSide,
} from './diff-target.js';
export { APP_OF_APPS_NOTE, buildReport, toJsonReport, withAppOfAppsNote } from './report.js';
export {
  renderComment,
  renderCheckSummary,
  planCommentLayout,
  splitImage,
  DIFF_COMMENT_MARKER,
  GITHUB_BODY_LIMIT,
  type CommentContext,
  type CommentLayout,
  type SectionLevel,
} from './comment.js';
export { renderPlain } from './plain.js';
export {
  planSharedChange,
  reachEnvironments,
  renderSharedChange,
  targetReach,
  type ConfiguredEnvironment,
  type ReachEnvironment,
  type SharedChange,
  type SharedChangeInput,
  type SkippedGates,
} from './shared-change.js';
export { settleRandomness, describeRandom, isTestHook, RANDOM_VALUE } from './random.js';
export { planRefusal } from './refusal.js';
export { checkChartYaml, checkValuesSchema, type ChartReads } from './chart-reads.js';
export {
  readHelmReleases,
  releaseTemplateArgs,
  argoEnvsubst,
  cleanSetParameter,
  shortenReleaseName,
  type HelmRelease,
  type ReleaseTree,
} from './helm-releases.js';
