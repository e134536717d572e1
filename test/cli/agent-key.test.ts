import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/index.js';

/** `escalator agent-key <owner>`: the key an owner's Argo CD and Flux are given (docs/health.md). */
function capture(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    cwd: process.cwd(),
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

describe('escalator agent-key', () => {
  const saved = process.env.ESCALATOR_AGENT_TOKEN;
  afterEach(() => {
    if (saved === undefined) delete process.env.ESCALATOR_AGENT_TOKEN;
    else process.env.ESCALATOR_AGENT_TOKEN = saved;
  });

  it("prints the owner's key: an HMAC of the server secret and the case-folded owner, different per owner", async () => {
    process.env.ESCALATOR_AGENT_TOKEN = 'server-secret';
    const io = capture();
    expect(await runCli(['agent-key', 'Acme'], io)).toBe(0);
    const expected = createHmac('sha256', 'server-secret').update('escalator-agent-key:acme').digest('hex');
    expect(io.out).toBe(`${expected}\n`);
    const other = capture();
    await runCli(['agent-key', 'example'], other);
    expect(other.out).not.toBe(io.out);
    expect(io.out).not.toContain('server-secret');
  });

  it('exits 2 with the reason without the server secret, an owner, or with a name that is no login', async () => {
    delete process.env.ESCALATOR_AGENT_TOKEN;
    const missing = capture();
    expect(await runCli(['agent-key', 'acme'], missing)).toBe(2);
    expect(missing.err).toContain('ESCALATOR_AGENT_TOKEN is not set');
    process.env.ESCALATOR_AGENT_TOKEN = 'server-secret';
    const none = capture();
    expect(await runCli(['agent-key'], none)).toBe(2);
    expect(none.err).toContain('name exactly one GitHub owner');
    const bad = capture();
    expect(await runCli(['agent-key', 'acme/gitops'], bad)).toBe(2);
    expect(bad.err).toContain('is not a GitHub login');
  });
});
