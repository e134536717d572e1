import type { Redis } from 'ioredis';
import { BlobStore } from './blobs.js';
import { CandidateStore } from './candidates.js';
import { ConfigChangeStore } from './config-changes.js';
import { HealthStore } from './health.js';
import { HeadStore } from './heads.js';
import { HealthGateStore } from './healthy-versions.js';
import { DashboardStore } from './dashboard.js';
import { FreezeStore } from './freezes.js';
import { HoldStore } from './holds.js';
import { LivingStore } from './living.js';
import { ProvenanceStore } from './provenance.js';
import { RefusalStore } from './refusals.js';
import { RollbackStore } from './rollbacks.js';
import { SubscriptionStore } from './subscriptions.js';
import { VersionStore } from './versions.js';

/**
 * Everything Escalator keeps in Redis about repositories, one store per kind of thing stored, all
 * under one key prefix. GitHub holds the truth; each of these is rebuilt or re-asked when lost.
 */
export class RepoState {
  readonly subscriptions: SubscriptionStore;
  readonly candidates: CandidateStore;
  readonly versions: VersionStore;
  readonly provenance: ProvenanceStore;
  readonly holds: HoldStore;
  readonly freezes: FreezeStore;
  readonly dashboard: DashboardStore;
  readonly refusals: RefusalStore;
  readonly living: LivingStore;
  /** What the agents (Argo CD, Flux, commit statuses) report about each environment and app. */
  readonly health: HealthStore;
  readonly healthGate: HealthGateStore;
  /** The commits each default branch pointed at: the only commits a report posted on GitHub may be about. */
  readonly heads: HeadStore;
  /** The last rollback of each environment and app: what it holds back, whether it halted. */
  readonly rollbacks: RollbackStore;
  /** File texts by blob SHA, so plans against an indexed commit read no file from GitHub. */
  readonly blobs: BlobStore;
  /** Configuration changes waiting to be promoted into each environment and app. */
  readonly configChanges: ConfigChangeStore;

  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {
    this.subscriptions = new SubscriptionStore(redis, prefix);
    this.candidates = new CandidateStore(redis, prefix);
    this.versions = new VersionStore(redis, prefix);
    this.provenance = new ProvenanceStore(redis, prefix);
    this.holds = new HoldStore(redis, prefix);
    this.freezes = new FreezeStore(redis, prefix);
    this.dashboard = new DashboardStore(redis, prefix);
    this.refusals = new RefusalStore(redis, prefix);
    this.living = new LivingStore(redis, prefix);
    this.health = new HealthStore(redis, prefix);
    this.healthGate = new HealthGateStore(redis, prefix);
    this.heads = new HeadStore(redis, prefix);
    this.rollbacks = new RollbackStore(redis, prefix);
    this.blobs = new BlobStore(redis, prefix);
    this.configChanges = new ConfigChangeStore(redis, prefix);
  }
}
