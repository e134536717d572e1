export * from './edit-images.js';
export { kustomizeViews, type KustomizeRename, type RenderView } from './renders.js';
export { editOptionsFor, editSettingsFrom, type EditSettings } from './settings.js';
