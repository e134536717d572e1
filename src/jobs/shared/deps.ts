import type { Redis } from 'ioredis';
import type { GitHubClients } from '../../adapters/github/client.js';
import type { RepoState } from '../../adapters/store/repo-state.js';
import type { Logger } from '../../observability/logger.js';
import type { Producer } from '../../queue/producer.js';
import type { NotesDeps } from './release-notes.js';

/** What every job may use. Built once per worker process in src/jobs/start-workers.ts. */
export interface JobDeps {
  log: Logger;
  github: GitHubClients;
  store: RepoState;
  producer: Producer;
  /** A plain connection for leases and state (not the workers' blocking one). */
  redis: Redis;
  /** Coalescing window for bumps: pushes of one target within it become one commit. */
  debounceMs: number;
  /** Lease time of a repository's write lease (renewed while held). */
  leaseMs: number;
  now: () => Date;
  /** The registry client and GitHub host that release notes and image verification use; without it, neither runs. */
  notes?: NotesDeps;
}
