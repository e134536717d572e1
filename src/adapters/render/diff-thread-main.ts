import { parentPort } from 'node:worker_threads';
import { diffSides, type DiffSide, type Target } from '../../planners/diff/index.js';

/** One diff request from `DiffThreads`. */
export interface DiffRequest {
  id: number;
  target: Target;
  base: DiffSide;
  head: DiffSide;
}

// Runs inside a worker thread: render plain manifests, collect secrets, parse, normalize, pair and
// diff one target, off the event loop that renews job locks and answers webhooks.
parentPort?.on('message', (request: DiffRequest) => {
  try {
    parentPort?.postMessage({ id: request.id, diff: diffSides(request.target, request.base, request.head) });
  } catch (error) {
    parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
