/**
 * `@escalator/github-sandbox/testing`: the simulator as its own tests drive it, for any test
 * that wants the same checks: every request and response held against GitHub's OpenAPI
 * description (`@octokit/openapi`), every webhook against `@octokit/webhooks-schemas`, and a
 * webhook receiver that keeps the raw bodies. Needs vitest (`expectGitHubShaped` uses `expect`).
 */
export { expectGitHubShaped, signAppJwt, startHarness, type Harness, type ReceivedWebhook } from './harness.js';
export { convertSchema, OpenApiRecorder, SchemaValidators } from './openapi.js';
export { WebhookRecorder } from './webhook-schemas.js';
