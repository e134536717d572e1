/**
 * The producer: the one way to add each kind of job. Each kind declares its schema, its job
 * options and the functions that enqueue it (id, delay, deduplication, priority) in its folder,
 * `src/jobs/<kind>/job.ts`; this file gathers them for intake and the jobs, which never import a
 * job folder. Nothing else calls `Producer.enqueue`. A contract imports no adapter and no
 * processor (.dependency-cruiser.cjs), so the web role loads none through here.
 */
export * from '../jobs/image/job.js';
export * from '../jobs/bump/job.js';
export * from '../jobs/promote/job.js';
export * from '../jobs/command/job.js';
export * from '../jobs/diff/job.js';
export * from '../jobs/relay/job.js';
export * from '../jobs/index/job.js';
export * from '../jobs/recover/job.js';
export * from '../jobs/health/job.js';
export * from '../jobs/dashboard/job.js';
export * from '../jobs/landing/job.js';
