import { parentPort } from 'node:worker_threads';
import { diffTarget, type RenderOutcome, type Target } from '../../planners/diff/index.js';

/** One diff request from `DiffThreads`; secrets travel as a list (structured clone has no Set of strings issue, but a list is smaller). */
export interface DiffRequest {
  id: number;
  target: Target;
  base: RenderOutcome;
  head: RenderOutcome;
  secrets: string[];
}

// Runs inside a worker thread: parse, normalize, pair and diff one target, off the event loop
// that renews job locks and answers webhooks.
parentPort?.on('message', (request: DiffRequest) => {
  try {
    const diff = diffTarget(request.target, request.base, request.head, { secrets: request.secrets });
    parentPort?.postMessage({ id: request.id, diff });
  } catch (error) {
    parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
