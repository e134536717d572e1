import type { HealthState, SyncState } from '../../planners/health.js';

/**
 * One report from an agent, in its own terms, before it is mapped to an environment and app of a
 * repository (./health-map.ts). Normalized from Flux events, Argo CD notifications and
 * GitHub commit statuses, check runs and deployment statuses.
 */
export interface AgentReport {
  agent: 'argocd' | 'flux' | 'status';
  /** The agent's object: an Argo CD Application, a Flux Kustomization or HelmRelease, a status context. */
  object: { name: string; namespace?: string; kind?: string };
  /** The commit (40 hex) the report is about; undefined when the agent named none (a chart version, an OCI digest). */
  revision?: string;
  sync: SyncState;
  health: HealthState;
  /** When the agent says it happened (ISO), when it said. */
  at?: string;
  url?: string;
  message?: string;
  /** The Git repository the agent reads, when it says (Argo CD's `repoURL`). */
  repoURL?: string;
  /** Who posted it on GitHub (commit statuses, check runs, deployment statuses): matched against the bound poster. */
  poster?: Poster;
  /**
   * A deployment status's Deployment: who created it, or that Escalator did. It counts only on a
   * Deployment Escalator or the bound poster created.
   */
  deployment?: { byEscalator: boolean; creator: Poster | undefined };
}

/**
 * Who posted something on GitHub: a GitHub App (its id and slug, as far as the payload names
 * them; a commit status names only its bot account `<slug>[bot]`), or a user.
 */
export type Poster = { kind: 'app'; id?: number; slug?: string } | { kind: 'user'; login: string };

export type AgentResult =
  { kind: 'report'; report: AgentReport } | { kind: 'ignored'; reason: string } | { kind: 'invalid'; message: string };

/** The longest agent message kept (the PR line quotes it; Flux allows 39,000 characters). */
export const MAX_MESSAGE_CHARS = 500;

export function boundMessage(text: string | undefined | null): string | undefined {
  if (!text) return undefined;
  const trimmed = text.trim();
  return trimmed.length > MAX_MESSAGE_CHARS ? `${trimmed.slice(0, MAX_MESSAGE_CHARS - 1)}…` : trimmed || undefined;
}

/**
 * The commit of a revision as the agents spell it: `main@sha1:<hex>` (Flux since v2.0, RFC 0005),
 * `main/<hex>` (Flux before it), `sha1:<hex>`, or the bare 40 hex (Argo CD, GitHub). Anything
 * else (an OCI digest `latest@sha256:…`, a chart version `1.2.3`) names no commit.
 */
export function commitOf(revision: string | undefined | null): string | undefined {
  if (!revision) return undefined;
  const match = /^(?:.*@)?sha1:([0-9a-f]{40})$|^(?:.*\/)?([0-9a-f]{40})$/i.exec(revision.trim());
  return match ? (match[1] ?? match[2])!.toLowerCase() : undefined;
}

/** A timestamp as ISO, or undefined when it does not parse. */
export function isoOf(text: unknown): string | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * When a report happened, for the record: the agent's time, but never later than when Escalator
 * received it. A cluster whose clock runs ahead would otherwise date its reports in the future,
 * and every later report (dated correctly) would look older than the recorded one and be ignored.
 */
export function reportTime(at: string | undefined, receivedAt: string): string {
  if (!at || Date.parse(at) > Date.parse(receivedAt)) return receivedAt;
  return at;
}

/** The longest URL and object name kept in a report (longer ones are cut or dropped, never refused). */
export const MAX_URL_CHARS = 2_000;
export const MAX_OBJECT_CHARS = 600;
