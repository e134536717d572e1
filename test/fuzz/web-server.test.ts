import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRaw, type RawRequest } from './support/raw-http.js';
import { startFuzzStack, type FuzzStack } from './support/stack.js';

/**
 * Requests Node's HTTP parser refuses before any route runs. Found by the HTTP fuzz: Node answered
 * them with an empty body (400, 431, 417), closed the connection without a word (CONNECT), or let
 * an unparseable absolute-form target reach a route that parses it (500).
 */
describe('the web server, for requests no route sees', () => {
  let stack: FuzzStack;
  beforeAll(async () => {
    stack = await startFuzzStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  async function answer(request: RawRequest): Promise<{ status: number; error: string }> {
    const outcome = await sendRaw(stack.url, request);
    if (outcome.kind !== 'response') throw new Error(`no response: ${outcome.detail}`);
    expect(outcome.response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(outcome.response.body) as { error: string };
    return { status: outcome.response.status, error: body.error };
  }
  const raw = (head: string): RawRequest => ({
    method: '',
    path: '',
    headers: [],
    framing: 'none',
    rawHead: Buffer.from(head, 'latin1'),
  });

  it.each([
    ['an unknown method', raw('FOO /healthz HTTP/1.1\r\nhost: x\r\n\r\n'), 400, 'Invalid method'],
    ['a request line that is not HTTP', raw('GARBAGE\r\n\r\n'), 400, 'not valid HTTP/1.1'],
    [
      'Content-Length beside Transfer-Encoding (smuggling)',
      raw(
        'POST /api/v1/images HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
      ),
      400,
      "Transfer-Encoding can't be present with Content-Length",
    ],
    [
      'two different Content-Lengths',
      raw('POST /api/v1/images HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n12345'),
      400,
      'not valid HTTP/1.1',
    ],
    [
      'a bad chunk size',
      raw('POST /api/v1/images HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'),
      400,
      'chunk size',
    ],
    [
      'a header without a colon',
      raw('GET /healthz HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n'),
      400,
      'not valid HTTP/1.1',
    ],
    ['an HTTP/2 preface', raw('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 400, 'not valid HTTP/1.1'],
    [
      '20 KB of headers',
      raw(`GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`),
      431,
      'headers are larger',
    ],
    [
      'CONNECT',
      raw('CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'),
      405,
      'CONNECT is not supported',
    ],
    [
      'an Expect other than 100-continue',
      raw('POST /api/v1/images HTTP/1.1\r\nhost: x\r\nexpect: teapot\r\ncontent-length: 2\r\n\r\n{}'),
      417,
      'Expect: teapot is not supported',
    ],
    [
      'an absolute-form target no URL parser reads',
      raw('GET http://[::1/admin/relay/deliveries HTTP/1.1\r\nhost: x\r\n\r\n'),
      400,
      'is not a path',
    ],
    ['an HTTP/1.1 request without Host', raw('GET /healthz HTTP/1.1\r\n\r\n'), 400, 'no Host header'],
    [
      'a path whose leading // makes it an invalid authority',
      raw('GET //[/admin HTTP/1.1\r\nhost: x\r\n\r\n'),
      400,
      'is not a path',
    ],
  ])('answers %s with a JSON error that says why', async (_name, request, status, message) => {
    const { status: got, error } = await answer(request);
    expect(got).toBe(status);
    expect(error).toContain(message);
  });

  it('answers an HTTP/1.0 request without Host, which that version allows', async () => {
    const outcome = await sendRaw(stack.url, raw('GET /healthz HTTP/1.0\r\n\r\n'));
    expect(outcome.kind === 'response' && outcome.response.status).toBe(200);
  });

  it('routes an absolute-form target by its path, as RFC 9112 asks', async () => {
    const outcome = await sendRaw(
      stack.url,
      raw('GET http://escalator.example.com/healthz HTTP/1.1\r\nhost: escalator.example.com\r\n\r\n'),
    );
    expect(outcome.kind === 'response' && outcome.response.status).toBe(200);
  });

  it('skips empty lines before a request line, as RFC 9112 asks, and answers the request after them', async () => {
    const outcome = await sendRaw(stack.url, raw('\n\r\n\r\nGET /healthz HTTP/1.1\r\nhost: x\r\n\r\n'));
    expect(outcome.kind === 'response' && outcome.response.status).toBe(200);
  });

  it('still answers /healthz after all of them', async () => {
    const outcome = await sendRaw(stack.url, { method: 'GET', path: '/healthz', headers: [], framing: 'none' });
    expect(outcome.kind === 'response' && outcome.response.body).toBe('{"status":"ok"}');
  });
});
