import { z } from 'zod';
import { EventScope, ImagePublished } from '../events/image-published.js';

/**
 * Job data schemas, checked when a job is added and again when it is processed.
 * Job data never holds secrets or tokens: installation ids and refs only.
 */

/**
 * An image was published: find the repositories that use it and plan their bumps, within the
 * scope of the credential that announced it (the owners it may write to; never the credential).
 */
export const ImageJob = z.object({
  event: ImagePublished,
  // Jobs queued by a version before scoped credentials were accepted with a global token, which
  // allowed every owner: they keep that meaning rather than be lost at the upgrade.
  scope: EventScope.default({ by: 'legacy:queued-before-scoped-credentials', owners: '*' }),
});
export type ImageJob = z.infer<typeof ImageJob>;

const RepoRef = { installationId: z.number().int().positive(), owner: z.string().min(1), repo: z.string().min(1) };

/**
 * Bring one (repository, environment, app) up to the images waiting for it. The images themselves
 * wait in a Redis hash (src/adapters/store/candidates.ts), so a burst of pushes becomes one job and one
 * commit, and no push is lost while a job runs.
 */
export const BumpJob = z.object({
  ...RepoRef,
  environment: z.string().min(1),
  app: z.string(),
});
export type BumpJob = z.infer<typeof BumpJob>;

/** Rebuild the subscription index entry of one repository. */
export const IndexJob = z.object({ ...RepoRef, reason: z.enum(['installation', 'push', 'missing', 'resync']) });

/** List every installation and repository, and index each one (after Redis lost the index). */
export const ResyncJob = z.object({ reason: z.string() });
export type IndexJob = z.infer<typeof IndexJob>;
export type ResyncJob = z.infer<typeof ResyncJob>;

/** Plan (or re-plan) the promotion into one environment, per app or grouped (`app: ''`). */
export const PromoteJob = z.object({
  ...RepoRef,
  environment: z.string().min(1),
  app: z.string(),
  reason: z.enum(['push', 'command', 'soak', 'hold', 'rollback', 'health', 'window', 'freeze']),
  /** Who asked, for commands (shown in replies and logs). */
  requestedBy: z.string().optional(),
  /** The issue or pull request whose command asked for this run: it gets a reply with what the run did. */
  replyTo: z.number().int().positive().optional(),
  /** `/escalator promote <env> --now`: skip the soak of the versions promoted now (a writer's command). */
  skipSoak: z.boolean().optional(),
  /** Why Escalator opened this promotion on its own (`rollback: auto`), shown in the pull request body. */
  because: z.string().max(1000).optional(),
  /** `rollback: auto`: the degraded spell (its start, ISO) this rollback answers; the job does nothing when the spell is over. */
  spell: z.string().max(40).optional(),
});
export type PromoteJob = z.infer<typeof PromoteJob>;

/** A `/escalator …` comment: checked for permission and answered in a worker, not in intake. */
export const CommandJob = z.object({
  ...RepoRef,
  issueNumber: z.number().int().positive(),
  isPull: z.boolean(),
  author: z.string().min(1),
  body: z.string().max(65_536),
  /** The pull request's body, to find the environment of a promotion PR from its marker. */
  prBody: z.string().max(262_144).optional(),
});
export type CommandJob = z.infer<typeof CommandJob>;

/** Render and diff one pull request at one head SHA; a newer head makes older jobs no-ops. */
export const DiffJob = z.object({
  ...RepoRef,
  number: z.number().int().positive(),
  headSha: z.string().regex(/^[0-9a-f]{40}$/),
  reason: z.enum(['pull_request', 'command', 'rerequest']),
});
export type DiffJob = z.infer<typeof DiffJob>;

/**
 * One coalesced delivery to one target. No secrets and no payload: the payloads wait in Redis
 * under `window` (src/queue/relay-store.ts) and the secret is looked up by target name.
 */
export const RelayJob = z.object({
  target: z.string().min(1),
  /** The delivery that scheduled this job (the one delivered may be newer). */
  deliveryId: z.string().min(1),
  repository: z.string().regex(/^[^/]+\/[^/]+$/, 'must be owner/name'),
  event: z.enum(['push', 'pull_request']),
  /** The coalescing window: target, repository, event and ref (or pull request). */
  window: z.string().min(1),
});
export type RelayJob = z.infer<typeof RelayJob>;

const HealthSourceSchema = z.object({
  agent: z.enum(['argocd', 'flux', 'status']),
  object: z.string().min(1).max(600),
  url: z.string().max(2_000).optional(),
});

/** One agent report, already mapped to an (environment, app) of a repository: record it, follow a change. */
export const HealthJob = z.object({
  ...RepoRef,
  report: z.object({
    owner: z.string().min(1),
    repo: z.string().min(1),
    environment: z.string().min(1),
    app: z.string(),
    revision: z.string().regex(/^[0-9a-f]{40}$/),
    sync: z.enum(['synced', 'out-of-sync', 'failed', 'unknown']),
    health: z.enum(['healthy', 'progressing', 'degraded', 'missing', 'suspended', 'unknown']),
    at: z.string().datetime({ offset: true }),
    source: HealthSourceSchema,
    message: z.string().max(1_000).optional(),
  }),
});
export type HealthJob = z.infer<typeof HealthJob>;

/**
 * Render the dashboard issue of one repository again. Coalesced: one waits at a time per
 * repository (and one forced, after a person ticked a box, so the box is unticked).
 */
export const DashboardJob = z.object({
  ...RepoRef,
  /** Write the body even when it hashes as the last one written (a person edited the issue). */
  force: z.boolean().optional(),
});
export type DashboardJob = z.infer<typeof DashboardJob>;
