/**
 * The one Redis the tests share: REDIS_URL, or the local one. No test names a Redis address of its
 * own (each keeps to a key prefix of its own instead); a test that needs a Redis to stop and start
 * starts a private one on a free port (test/e2e/faults.test.ts). A light module on purpose: unit
 * and integration tests import it without loading the product (test/support/stack.ts re-exports it).
 */
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
