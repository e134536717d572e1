import { normalizeArgoCdBody } from './argocd.js';
import { normalizeFluxEvent } from './flux.js';
import type { AgentResult } from './report.js';

export * from './argocd.js';
export * from './flux.js';
export * from './github.js';
export * from './report.js';

/**
 * The agents that post to Escalator directly, one row each: how a request proves it comes from
 * the agent, and how its body becomes a report. The routes (`POST /agents/<name>`), their tests
 * and docs/health.md read this table.
 */
export interface AgentDescriptor {
  /** `hmac`: `X-Signature: sha256=<hex HMAC-SHA256 of the body>`; `bearer`: `Authorization: Bearer <token>`. */
  auth: 'hmac' | 'bearer';
  normalize(payload: unknown): AgentResult;
  /** Whether its bodies name the Git repository (Argo CD's `repoURL`). */
  namesRepository: boolean;
}

export const agentTable = {
  flux: { auth: 'hmac', normalize: normalizeFluxEvent, namesRepository: false },
  argocd: { auth: 'bearer', normalize: normalizeArgoCdBody, namesRepository: true },
} as const satisfies Record<string, AgentDescriptor>;

export type AgentName = keyof typeof agentTable;
export const agentNames = Object.keys(agentTable) as AgentName[];
