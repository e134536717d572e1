export * from './edit-images.js';
export {
  kustomizationPaths,
  kustomizationRefs,
  kustomizationSiblings,
  kustomizeViews,
  imagesWithoutEntry,
  missingImageEntries,
  type KustomizeRename,
  type RenderView,
} from './renders.js';
export { editOptionsFor, editSettingsFrom, type EditSettings } from './settings.js';
export { addImageEntry, type AddEntryOptions, type AddEntryResult } from './add-entry.js';
