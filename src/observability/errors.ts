/**
 * The error taxonomy. Adapters throw these; one wrapper (src/queue/worker.ts) maps them onto queue
 * semantics, so no processor ever decides retry policy with a try/catch of its own.
 */

/** Bad repository configuration or input that no retry can fix: fail now and make it visible. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Input failed validation (job data, payloads). Never retried. */
export class ValidationError extends Error {
  override name = 'ValidationError';
}

/** GitHub said "slow down". The job is moved to delayed until `resetAt` (ms since epoch). */
export class RateLimitError extends Error {
  override name = 'RateLimitError';
  constructor(
    message: string,
    readonly resetAt: number,
  ) {
    super(message);
  }
}

/** A compare-and-swap lost against a concurrent writer: re-plan from fresh state and retry. */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** A file or ref that was expected is not there. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** GitHub has not finished computing mergeability; the job retries with backoff. */
export class MergeNotReadyError extends Error {
  override name = 'MergeNotReadyError';
}

/** The repository's index is not there: it is being rebuilt, and this job retries after it. */
export class IndexMissingError extends Error {
  override name = 'IndexMissingError';
}

/**
 * The job waits for another job's work (a merge's landing, for the index to record the merge):
 * it is delayed without using an attempt, and runs again when that work wakes it or after a moment.
 */
export class WaitError extends Error {
  override name = 'WaitError';
}

/** An agent refused a relayed request in a way no retry changes (wrong secret, unknown receiver): fail now, visibly. */
export class AgentRejectedError extends ConfigError {
  override name = 'AgentRejectedError';
}

/** An agent was unreachable or answered 5xx/429/408: attempts and backoff apply. */
export class AgentUnavailableError extends Error {
  override name = 'AgentUnavailableError';
}

export type ErrorClass = 'unrecoverable' | 'rate-limited' | 'retry';

/** Decide once how an error thrown by a job is treated. */
export function classifyError(error: unknown): ErrorClass {
  if (error instanceof ConfigError || error instanceof ValidationError) return 'unrecoverable';
  if (error instanceof RateLimitError) return 'rate-limited';
  return 'retry';
}
