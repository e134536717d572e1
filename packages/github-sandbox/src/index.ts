/**
 * `@escalator/github-sandbox`: a GitHub-compatible REST API server backed by real git
 * repositories (README.md). Start one with `startSimulator()`; act as a person through
 * `SandboxClient` (the `/_sandbox/…` control API) and as an App or user through any GitHub
 * client pointed at `Simulator.apiUrl`.
 */
export { startSimulator, type Exchange, type Simulator, type SimulatorOptions } from './server.js';
export {
  SandboxClient,
  SandboxClientError,
  type CreateRepoInput,
  type DeliverySummary,
  type RateLimitMode,
} from './client.js';
export type { DeliveryRecord } from './webhooks.js';
