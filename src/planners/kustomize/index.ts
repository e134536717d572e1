/**
 * One kustomization reader for every planner (issue 37): which files a kustomization reads, read
 * the way kustomize reads it (`reads.ts`), the names a kustomization file may have and the rule
 * that two in one directory are refused (`names.ts`), and where a reference lands, remote
 * references recognised and left out (`refs.ts`). The editor's render graph
 * (`image-edit/renders.ts`) and the diff's target graph (`diff/targets.ts`) both read
 * kustomizations through it. Pure: text in, data out.
 */
export {
  fileSourcePaths,
  foldKey,
  isRemoteReference,
  readKustomization,
  readPluginConfigPaths,
  readYamlMappings,
  recordField,
  recordList,
  stringField,
  stringList,
  type ChartArgument,
  type ChartArgumentKind,
  type ChartRef,
  type FieldRef,
  type KustomizationReads,
  type ReadOptions,
  type ReadOutcome,
} from './reads.js';
export {
  KUSTOMIZATION_NAMES,
  isKustomizationPath,
  kustomizationFile,
  kustomizationPaths,
  kustomizationSiblings,
} from './names.js';
export { isInlinePatch, landReference, renderedReferences, type Landing } from './refs.js';
