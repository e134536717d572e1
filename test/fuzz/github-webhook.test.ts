import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRaw } from './support/raw-http.js';
import { githubSignature, startFuzzStack, type FuzzStack } from './support/stack.js';

/**
 * Correctly signed deliveries that no GitHub would send. Found by the HTTP fuzz: a payload of
 * `null` or a string, event names that are `Object.prototype` members (`__proto__`, `valueOf`),
 * an `installation.id` that is not a number and an `action` that is a deeply nested array were
 * answered 500 ("a handler failed") instead of 400.
 */
describe('the GitHub webhook route, for signed deliveries that are not GitHub events', () => {
  let stack: FuzzStack;
  beforeAll(async () => {
    stack = await startFuzzStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  async function deliver(event: string, text: string) {
    const body = Buffer.from(text);
    const before = await stack.jobCount();
    const outcome = await sendRaw(stack.url, {
      method: 'POST',
      path: '/api/github/webhooks',
      framing: 'length',
      body,
      headers: [
        ['content-type', 'application/json'],
        ['x-github-event', event],
        ['x-github-delivery', randomUUID()],
        ['x-hub-signature-256', githubSignature(stack.secrets.webhookSecret, body)],
      ],
    });
    if (outcome.kind !== 'response') throw new Error(outcome.detail);
    expect(await stack.jobCount()).toBe(before);
    return { status: outcome.response.status, body: JSON.parse(outcome.response.body) as { error?: string } };
  }

  it.each([
    ['null', 'the payload is null, not a JSON object'],
    ['"push"', 'the payload is a string, not a JSON object'],
    ['42', 'the payload is a number, not a JSON object'],
    ['[{"ref":"refs/heads/main"}]', 'the payload is an array, not a JSON object'],
  ])('refuses the payload %s with 400', async (payload, message) => {
    expect(await deliver('push', payload)).toEqual({ status: 400, body: { error: message } });
  });

  it.each([
    '__proto__',
    'valueOf',
    'hasOwnProperty',
    'constructor',
    'toString',
    'Push',
    'push.created',
    'x'.repeat(65),
  ])('refuses the event name %j with 400', async (event) => {
    const res = await deliver(event, '{}');
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('is not a GitHub event name');
  });

  it.each([
    ['a string', '"x"'],
    ['a huge string', JSON.stringify('9'.repeat(100_000))],
    ['zero', '0'],
    ['a fraction', '1.5'],
    ['an object', '{"id":1}'],
    ['a 10,000-deep array', `${'['.repeat(10_000)}1${']'.repeat(10_000)}`],
  ])(
    'refuses an installation.id that is %s with 400 (Probot throws on ids that are not numbers)',
    async (_name, id) => {
      const res = await deliver('ping', `{"zen":"x","installation":{"id":${id}}}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('is not an installation id');
    },
  );

  it.each([
    ['a 10,000-deep array', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['a number', '1'],
    ['null', 'null'],
  ])(
    'refuses an action that is %s with 400 (@octokit/webhooks turns it into text to route it)',
    async (_name, action) => {
      const res = await deliver('ping', `{"zen":"x","action":${action}}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^action must be a string, found /);
    },
  );

  it('still accepts real event names', async () => {
    expect((await deliver('ping', '{"zen":"Design for failure."}')).status).toBe(202);
    expect((await deliver('security_and_analysis', '{}')).status).toBe(202);
  });
});
