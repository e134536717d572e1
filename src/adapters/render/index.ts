/** Renderers and checkouts for the rendered-manifest diff (issue 6): all the I/O it needs. */
export { renderAndDiff, type RenderAndDiffInput, type RenderOptions } from './render-and-diff.js';
export { LocalGitSourceTree, changedPathsBetween, gitBlobSha, gitCalls, type SourceTree } from './source-tree.js';
export { materializeCheckout, type Checkout } from './checkout.js';
export { RenderCache, installationCacheDir } from './render-cache.js';
export { findTools, type Tools, type ToolPaths } from './tools.js';
export { renderKustomization, refuseKustomization } from './kustomize.js';
export { renderHelmChart, HELM_MISSING } from './helm.js';
export { runTool, cleanToolError, scrubbedEnv, findExecutable, renderWithTool, type ToolRunOptions } from './exec.js';
export {
  probeIsolation,
  isolationUnavailableMessage,
  warnIfRenderIsolationUnavailable,
  RENDER_ISOLATION_MODES,
  type RenderIsolationMode,
  type IsolationStatus,
} from './isolation.js';
