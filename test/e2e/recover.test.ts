import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, redisUrl, startStack, type Stack } from '../support/stack.js';

/** GitHub never retries a failed delivery; Escalator asks for it again when it starts. */
describe('missed-delivery recovery (sandbox GitHub)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('redelivers each failed delivery once, and leaves the successful ones alone', { timeout: 90_000 }, async () => {
    const appUrl = `${stack.app.url}/api/github/webhooks`;
    await stack.client.createRepo({ name: 'gitops', files: { 'a.yaml': 'a: 1\n' } });
    // Escalator is unreachable for a while: these pushes fail at GitHub's side.
    stack.sim.setWebhookUrl('http://127.0.0.1:9/unreachable');
    const missed = await stack.client.commit('developer/gitops', { branch: 'main', files: { 'a.yaml': 'a: 2\n' } });
    const failed = (await stack.client.deliveries({ event: 'push' })).filter(
      (d) => (d.payload as { after?: string }).after === missed.sha,
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]!.status_code).not.toBe(202);
    stack.sim.setWebhookUrl(appUrl);

    // A restart of the worker role runs recovery at once (the scheduler's first run).
    await stack.app.close();
    const { startEscalator } = await import('../../src/main/server.js');
    const { createLogger } = await import('../../src/observability/logger.js');
    const restarted = await startEscalator(
      {
        APP_ID: String(stack.sim.app.id),
        PRIVATE_KEY: stack.sim.app.privateKey,
        WEBHOOK_SECRET: stack.sim.app.webhookSecret,
        GITHUB_API_URL: stack.sim.apiUrl,
        REDIS_URL: redisUrl,
        PORT: '0',
        HOST: '127.0.0.1',
        ESCALATOR_RECOVER_EVERY_MS: '600000',
      },
      { prefix: stack.prefix, log: createLogger({ level: process.env.E2E_LOG_LEVEL ?? 'silent' }) },
    );
    stack.sim.setWebhookUrl(`${restarted.url}/api/github/webhooks`);
    stack.app = restarted;
    const redelivered = await eventually(
      async () => {
        const all = await stack.client.deliveries({ event: 'push' });
        const again = all.filter((d) => d.guid === failed[0]!.guid && d.redelivery);
        return again.length > 0 ? again : undefined;
      },
      { what: 'the redelivery', timeoutMs: 60_000 },
    );
    expect(redelivered).toHaveLength(1);
    expect(redelivered[0]!.status_code).toBe(202);
    // Successful deliveries (the installation event) were not redelivered.
    const others = (await stack.client.deliveries()).filter((d) => d.redelivery && d.guid !== failed[0]!.guid);
    expect(others).toHaveLength(0);
  });
});
