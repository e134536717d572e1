import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/stack.js';
import { githubSignature, startFuzzStack, type FuzzStack } from './support/stack.js';

/**
 * The GitHub route must read a body before it can check the signature. Bodies not yet verified
 * share one budget (ESCALATOR_WEBHOOK_BUFFER_BYTES, here its minimum of 1 MiB): a sender without
 * the secret who holds it gets nothing more, and everyone else gets 503 with Retry-After (the
 * recovery job redelivers) instead of the process holding 25 MB per connection.
 */
describe('the GitHub route under slow unverified uploads', () => {
  let stack: FuzzStack;
  const held: Socket[] = [];
  beforeAll(async () => {
    stack = await startFuzzStack({ env: { ESCALATOR_WEBHOOK_BUFFER_BYTES: String(1024 * 1024) } });
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await stack.close();
  });

  /** Starts an upload that announces 20 MB, sends `bytes` of it, and keeps the connection open. */
  async function holdUpload(bytes: number): Promise<Socket> {
    const { hostname, port } = new URL(stack.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    held.push(socket);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/github/webhooks HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${20 * 1024 * 1024}\r\nx-github-event: push\r\nx-github-delivery: slow\r\nx-hub-signature-256: sha256=00\r\n\r\n`,
    );
    socket.write(Buffer.alloc(bytes, 0x20));
    return socket;
  }

  /** escalator_webhook_unverified_bytes as /metrics reports it. */
  async function unverifiedBytes(): Promise<number> {
    const text = await (await fetch(`${stack.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const line = text.split('\n').find((l) => l.startsWith('escalator_webhook_unverified_bytes '));
    if (!line) throw new Error('/metrics has no escalator_webhook_unverified_bytes');
    return Number(line.split(' ')[1]);
  }

  async function deliver(
    body: Buffer,
    signature: string,
  ): Promise<{ status: number; retryAfter: string | null; error: string }> {
    const response = await fetch(`${stack.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': `d-${Math.random()}`,
        'x-hub-signature-256': signature,
      },
      body,
      signal: AbortSignal.timeout(15_000),
    });
    const json = (await response.json()) as { error?: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), error: json.error ?? '' };
  }

  it('answers 503 with Retry-After while the budget is held, then verifies again once it is freed', async () => {
    const body = Buffer.from(JSON.stringify({ zen: 'x'.repeat(300 * 1024), hook_id: 1 }));
    const unsigned = 'sha256=0000';
    // Before: a wrong signature is a 400 that says why.
    expect(await deliver(body, unsigned)).toMatchObject({
      status: 400,
      error: expect.stringContaining('signature does not match'),
    });

    const slow = await holdUpload(900 * 1024);
    // Wait until the server has read the slow upload's bytes (the gauge operators watch), so the
    // next delivery meets a spent budget whatever the machine's load.
    await eventually(async () => ((await unverifiedBytes()) >= 900 * 1024 ? true : undefined), {
      timeoutMs: 30_000,
      what: "the slow upload's bytes in escalator_webhook_unverified_bytes",
    });
    const refused = await deliver(body, githubSignature(stack.secrets.webhookSecret, body));
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('5');
    expect(refused.error).toMatch(
      /^other requests are sending \d+ bytes of bodies that are not verified yet, the most Escalator holds at once \(ESCALATOR_WEBHOOK_BUFFER_BYTES\); retry in a few seconds$/,
    );
    // The answer came before the body was read, so the connection was closed: the same client goes on.
    expect((await fetch(`${stack.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);

    slow.destroy();
    await eventually(async () => ((await unverifiedBytes()) === 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'escalator_webhook_unverified_bytes back at 0 once the slow upload is gone',
    });
    expect(await deliver(body, githubSignature(stack.secrets.webhookSecret, body))).toMatchObject({ status: 202 });
    expect(await deliver(body, unsigned)).toMatchObject({ status: 400 });
  });
});
