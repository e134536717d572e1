/**
 * `@escalator/github-sandbox/agents`: the simulated in-cluster agents (Argo CD, Flux) that report
 * sync and health to Escalator after each push to the simulated GitHub, and the seeding of a
 * repository's configuration with their objects. Dev-only: tests, e2e and `npm run sandbox`.
 */
export {
  agentObjects,
  SimulatedAgent,
  type AgentObject,
  type SimulatedAgentKind,
  type SimulatedAgentOptions,
} from './agent.js';
export { argoCdBody, fluxEvent, type AgentState, type SimulatedHealth } from './wire.js';
export {
  checkSeededConfig,
  mergeAgentHealth,
  SeededConfigError,
  withAgentHealth,
  type SeedConfigCheck,
} from './seed.js';
