import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentNames } from '../../src/events/agents/index.js';
import { agentKey } from '../../src/intake/agent-routes.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { sendRaw } from './support/raw-http.js';
import {
  defaultRuns,
  describeCase,
  endpointCases,
  FUZZ_OWNER,
  fuzzEndpoint,
  githubDeliveries,
  intakeTarget,
  RedisCounts,
  registryFixtures,
  runCase,
  sweepCases,
  Tally,
  type FuzzCase,
} from './support/http-fuzz.js';
import { githubSignature, sourcesBy, startFuzzStack, type FuzzStack, type Secrets } from './support/stack.js';

/**
 * Every endpoint of the web role, as production starts it, against generated hostile requests
 * (test/fuzz/support/http-fuzz.ts lists the invariants). FUZZ_SCALE multiplies the runs;
 * `npx tsx bench/fuzz-report.ts` prints the counts by endpoint and outcome.
 */
const scale = Number(process.env.FUZZ_SCALE ?? 1);

/**
 * Everything the web role logs during the run, at `debug` (the most the product logs), as pino
 * writes it: the lines are searched for secrets once the run is over.
 */
class LogCapture {
  readonly lines: string[] = [];
  readonly log: Logger = createLogger({
    level: 'debug',
    // pino writes strings: kept as they come, not turned into Buffers and back.
    destination: new Writable({
      decodeStrings: false,
      write: (chunk: string | Buffer, _encoding, done) => {
        this.lines.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
        done();
      },
    }),
  });
}

/**
 * Every secret the stack is configured with, and every token the fuzz put in a path, each as a
 * whole and as its last 16 characters (a log that cuts a path short still leaks its tail); the
 * private key by each line of its PEM body.
 */
function secretsOf(secrets: Secrets): Array<[string, string]> {
  const named: Array<[string, string]> = [
    ['WEBHOOK_SECRET', secrets.webhookSecret],
    ['relay secret', secrets.relaySecret],
    ['registry token', secrets.registryToken],
    ['CI token', secrets.ciToken],
    ['admin token', secrets.adminToken],
    ['ESCALATOR_AGENT_TOKEN', secrets.agentToken],
    [`agent key of ${FUZZ_OWNER}`, agentKey(secrets.agentToken, FUZZ_OWNER)],
    ['agent key of intruder', agentKey(secrets.agentToken, 'intruder')],
    ...sourcesBy('path-token').map((source): [string, string] => [
      `path token of ${source}`,
      secrets.pathToken(source),
    ]),
  ];
  const pem = secrets.privateKey
    .split('\n')
    .filter((line) => line.length >= 32 && !line.startsWith('-----'))
    .map((line, i): [string, string] => [`PRIVATE_KEY line ${i + 1}`, line]);
  return [
    ...named.flatMap(([name, value]): Array<[string, string]> => [
      [name, value],
      [`${name} (tail)`, value.slice(-16)],
    ]),
    ...pem,
  ];
}

/** `name: line` for each secret found in the captured lines. */
function leaks(capture: LogCapture, secrets: Secrets): string[] {
  const found: string[] = [];
  for (const [name, value] of secretsOf(secrets))
    for (const line of capture.lines) if (line.includes(value)) found.push(`${name}: ${line.slice(0, 300)}`);
  return found;
}

/**
 * Taken by intake: queued (202), or known already (200 `duplicate`: the fuzz before sent the same
 * image, tag and digest with the same credential, and Redis holds that job).
 */
function taken(outcome: Awaited<ReturnType<typeof sendRaw>>): boolean {
  if (outcome.kind !== 'response') return false;
  if (outcome.response.status === 202) return true;
  if (outcome.response.status !== 200) return false;
  const answer = JSON.parse(outcome.response.body) as { duplicate?: number; accepted?: number };
  return answer.accepted === 0 && (answer.duplicate ?? 0) > 0;
}

describe('HTTP fuzz against the web role', () => {
  let stack: FuzzStack;
  let cases: ReturnType<typeof endpointCases>;
  const tally = new Tally();
  const capture = new LogCapture();

  beforeAll(async () => {
    stack = await startFuzzStack({ log: capture.log });
    cases = endpointCases(stack.secrets);
  });
  afterAll(async () => {
    await stack?.close();
  });

  describe.each(Object.entries(defaultRuns))('%s', (endpoint, runs) => {
    it(`keeps every invariant for ${Math.round(runs * scale)} generated requests`, async () => {
      await fuzzEndpoint(stack, cases[endpoint] as never, Math.round(runs * scale), tally);
      expect(tally.total(endpoint)).toBeGreaterThanOrEqual(Math.round(runs * scale));
      // The fuzz must reach past authentication, or it proves little about what lies behind it.
      if (
        endpoint.startsWith('registry/') ||
        endpoint.startsWith('agents/') ||
        endpoint === 'ci' ||
        endpoint === 'github-webhook' ||
        endpoint === 'admin/relay'
      ) {
        const reached = [...(tally.counts.get(endpoint)?.entries() ?? [])]
          .filter(([status]) => /^2\d\d$/.test(status))
          .reduce((sum, [, n]) => sum + n, 0);
        expect(reached).toBeGreaterThan(0);
      }
    });
  });

  it('keeps every invariant with each field of each real payload replaced by deep nesting or a huge string', async () => {
    const failures: string[] = [];
    const sweep = sweepCases(stack.secrets);
    const counts = new RedisCounts(stack);
    await counts.reset();
    for (const fuzzCase of sweep) {
      const problems = await runCase(stack, fuzzCase, tally, 'up', counts);
      if (problems.length > 0) failures.push(describeCase(fuzzCase, problems));
    }
    expect(failures).toEqual([]);
    expect(sweep.length).toBeGreaterThan(1000);
  }, 120_000);

  describe('bodies beyond the limits', () => {
    async function expect413(fuzzCase: FuzzCase): Promise<string> {
      const problems = await runCase(stack, fuzzCase, tally);
      expect(problems).toEqual([]);
      const outcome = await sendRaw(stack.url, fuzzCase.request);
      expect(outcome.kind === 'response' && outcome.response.status).toBe(413);
      return outcome.kind === 'response' ? (JSON.parse(outcome.response.body) as { error: string }).error : '';
    }
    const webhook = (
      body: Buffer | undefined,
      framing: 'length' | 'chunked' | 'none',
      declared?: number,
    ): FuzzCase => ({
      endpoint: 'github-webhook',
      request: {
        method: 'POST',
        path: '/api/github/webhooks',
        framing,
        chunkSize: 256 * 1024,
        ...(body ? { body } : {}),
        headers: [
          ['content-type', 'application/json'],
          ['x-github-event', 'push'],
          ['x-github-delivery', randomUUID()],
          ['x-hub-signature-256', githubSignature(stack.secrets.webhookSecret, body ?? Buffer.alloc(0))],
          ...(declared ? [['content-length', String(declared)] as [string, string]] : []),
        ],
      },
      authentic: true,
      shape: `oversized ${framing}`,
    });

    it('refuses a GitHub delivery that declares more than 25 MB before reading it', async () => {
      expect(await expect413(webhook(undefined, 'none', 26 * 1024 * 1024))).toContain(
        'body of 27262976 bytes is larger than the limit of 26214400 bytes',
      );
    });

    it('refuses a chunked GitHub delivery (no Content-Length) once it passes 25 MB', async () => {
      const body = Buffer.alloc(26 * 1024 * 1024, 0x20);
      expect(await expect413(webhook(body, 'chunked'))).toContain('body is larger than the limit of 26214400 bytes');
    });

    it.each(['length', 'chunked'] as const)(
      'refuses a registry body over ESCALATOR_MAX_BODY_BYTES sent with %s framing',
      async (framing) => {
        const body = Buffer.from(`{"pad":"${'x'.repeat(stack.secrets.maxBodyBytes)}"}`);
        const error = await expect413({
          endpoint: 'registry/harbor',
          request: {
            method: 'POST',
            path: '/registry/harbor',
            framing,
            chunkSize: 1000,
            body,
            headers: [
              ['content-type', 'application/json'],
              ['authorization', `Bearer ${stack.secrets.registryToken}`],
            ],
          },
          authentic: true,
          shape: `oversized ${framing}`,
        });
        expect(error).toContain(`larger than the limit of ${stack.secrets.maxBodyBytes} bytes`);
      },
    );
  });

  it('survives uploads cut off halfway, and enqueues nothing for them', async () => {
    const [jobs, keys] = [await stack.jobCount(), await stack.keyCount()];
    const { hostname, port } = new URL(stack.url);
    for (const [path, auth] of [
      ['/api/v1/images', stack.secrets.ciToken],
      ['/registry/harbor', stack.secrets.registryToken],
      ['/api/github/webhooks', ''],
    ] as const) {
      for (const declared of [1000, 10 * 1024 * 1024]) {
        await new Promise<void>((resolve) => {
          const socket = connect({ host: hostname, port: Number(port) }, () => {
            socket.write(
              `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${auth}\r\nx-github-event: push\r\nx-github-delivery: cut\r\nx-hub-signature-256: sha256=00\r\ncontent-length: ${declared}\r\n\r\n{"image":"ghcr.io/exa`,
            );
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 20);
          });
          socket.on('error', () => resolve());
        });
      }
    }
    const health = await sendRaw(stack.url, { method: 'GET', path: '/healthz', headers: [], framing: 'none' });
    expect(health.kind === 'response' && health.response.status).toBe(200);
    expect([await stack.jobCount(), await stack.keyCount()]).toEqual([jobs, keys]);
  });

  it('accepts the real payload of every route with valid credentials, so the fuzz runs behind authentication too', async () => {
    const accepted: string[] = [];
    for (const [source, { files, contentType }] of Object.entries(registryFixtures)) {
      const { path, token } = intakeTarget(source, stack.secrets);
      const outcome = await sendRaw(stack.url, {
        method: 'POST',
        path,
        framing: 'length',
        body: files[0],
        headers: [
          ['content-type', contentType],
          ['authorization', `Bearer ${token}`],
        ],
      });
      if (taken(outcome)) accepted.push(source);
    }
    for (const { event, body } of githubDeliveries) {
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
      if (outcome.kind === 'response' && outcome.response.status === 202) accepted.push(event);
    }
    expect(accepted.sort()).toEqual([...Object.keys(registryFixtures), ...githubDeliveries.map((d) => d.event)].sort());
  });

  // Correctly signed deliveries of events the app handles, with a field GitHub always sends
  // missing or of the wrong type: refused with 400 by the payload check (src/intake/github-payloads.ts).
  describe('signed deliveries of handled events with payloads GitHub never sends', () => {
    it.each([
      ['push', { ref: 'refs/heads/main', repository: null, installation: { id: 1 } }],
      // The relay reads the changed paths of a push: found by the fuzz, once a 500 from the relay job's schema.
      [
        'push',
        {
          ref: 'refs/heads/main',
          repository: { name: 'r', full_name: 'o/r', owner: { login: 'o' } },
          installation: { id: 1 },
          commits: [{ added: [[[]]], modified: [], removed: [] }],
        },
      ],
      [
        'push',
        {
          ref: 'refs/heads/main',
          repository: { name: 'r', full_name: 'o/r', owner: { login: 'o' } },
          installation: { id: 1 },
          after: 5,
          commits: [],
        },
      ],
      ['pull_request', { action: 'closed', repository: { name: 'r', owner: { login: 'o' } } }],
      ['installation', { action: 'created', installation: { id: 1 }, repositories: [{ full_name: 'no-slash' }] }],
      [
        'installation_repositories',
        { action: 'added', installation: { id: 1 }, repositories_added: [{ full_name: 5 }] },
      ],
      [
        'issue_comment',
        {
          action: 'created',
          installation: { id: 1 },
          comment: { body: '/escalator plan', user: null },
          issue: null,
          repository: { name: 'r', owner: { login: 'o' } },
        },
      ],
      [
        'pull_request',
        {
          action: 'synchronize',
          pull_request: { number: 1, head: { sha: 'a' } },
          repository: { name: 'r', owner: { login: 'o' } },
          installation: { id: 1 },
        },
      ],
      // Agents' reports as GitHub carries them: what src/events/agents/github.ts reads must be there.
      ['status', { sha: 5, context: 'c', state: 'success', repository: { name: 'r', owner: { login: 'o' } } }],
      [
        'deployment_status',
        {
          deployment_status: { state: 'success' },
          deployment: null,
          repository: { name: 'r', owner: { login: 'o' } },
          installation: { id: 1 },
        },
      ],
      [
        'check_run',
        {
          action: 'completed',
          check_run: { name: 'n', head_sha: 'a', pull_requests: [], output: 'text' },
          repository: { name: 'r', owner: { login: 'o' } },
        },
      ],
      // A ticked box on the dashboard issue is read from `changes.body.from` and the issue's body.
      [
        'issues',
        {
          action: 'edited',
          issue: { number: 1, body: '<!-- escalator:dashboard v1 -->', updated_at: '2026-12-05T00:00:00Z' },
          changes: { body: { from: 5 } },
          sender: { login: 'u' },
          repository: { name: 'r', owner: { login: 'o' } },
          installation: { id: 1 },
        },
      ],
    ])('answers %s with 400 and the path of the field, and enqueues nothing', async (event, payload) => {
      const [jobs, keys] = [await stack.jobCount(), await stack.keyCount()];
      const body = Buffer.from(JSON.stringify(payload));
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
      expect(outcome.kind === 'response' && outcome.response.status).toBe(400);
      expect(outcome.kind === 'response' && outcome.response.body).toContain(
        `the ${event} payload is not what GitHub sends`,
      );
      expect([await stack.jobCount(), await stack.keyCount()]).toEqual([jobs, keys]);
    });
  });

  it('let no payload pollute Object.prototype', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('still answers /healthz and /readyz after everything', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const outcome = await sendRaw(stack.url, { method: 'GET', path, headers: [], framing: 'none' });
      expect(outcome.kind === 'response' && outcome.response.status).toBe(200);
    }
  });

  it('logged no configured secret and no token the fuzz put in a path, in any line of the whole run', () => {
    // The run must have logged, and reached the routes that log refusals with their reason.
    expect(capture.lines.length).toBeGreaterThan(1000);
    for (const agent of agentNames)
      expect(
        capture.lines.some((line) => line.includes('"Agent report refused"') && line.includes(`"agent":"${agent}"`)),
      ).toBe(true);
    expect(leaks(capture, stack.secrets)).toEqual([]);
    // Probot's line for each delivery names it, without its payload (src/main/server.ts).
    const received = capture.lines.filter((line) => line.includes('"msg":"Webhook received"'));
    expect(received.length).toBeGreaterThan(0);
    for (const line of received)
      expect(Object.keys((JSON.parse(line) as { event: object }).event).sort()).toEqual(['id', 'name']);
  });
});

describe('HTTP fuzz against the intake routes with scoped tokens and GitHub Actions OIDC', () => {
  let stack: FuzzStack;
  let cases: ReturnType<typeof endpointCases>;
  const tally = new Tally();
  const capture = new LogCapture();

  beforeAll(async () => {
    stack = await startFuzzStack({ scoped: true, log: capture.log });
    cases = endpointCases(stack.secrets);
  });
  afterAll(async () => {
    await stack?.close();
  });

  // The same invariants; each path token is a secret of its own, and other credentials (path
  // tokens as headers, refused OIDC tokens, the GAR token) are among the wrong ones tried.
  describe.each(
    Object.entries(defaultRuns).filter(([endpoint]) => endpoint === 'ci' || endpoint.startsWith('registry/')),
  )('%s', (endpoint, runs) => {
    it(`keeps every invariant for ${Math.round((runs / 2) * scale)} generated requests, and reaches past authentication`, async () => {
      await fuzzEndpoint(stack, cases[endpoint] as never, Math.round((runs / 2) * scale), tally);
      const reached = [...(tally.counts.get(endpoint)?.entries() ?? [])]
        .filter(([status]) => /^2\d\d$/.test(status))
        .reduce((sum, [, n]) => sum + n, 0);
      expect(reached).toBeGreaterThan(0);
    });
  });

  it('accepts the real payload of every route with its own credential, and a GitHub Actions OIDC token on the CI API', async () => {
    const accepted: string[] = [];
    for (const [source, { files, contentType }] of Object.entries(registryFixtures)) {
      const { path, token } = intakeTarget(source, stack.secrets);
      const outcome = await sendRaw(stack.url, {
        method: 'POST',
        path,
        framing: 'length',
        body: files[0],
        headers: [
          ['content-type', contentType],
          ['authorization', `Bearer ${token}`],
        ],
      });
      if (taken(outcome)) accepted.push(source);
    }
    const oidc = await sendRaw(stack.url, {
      method: 'POST',
      path: '/api/v1/images',
      framing: 'length',
      body: registryFixtures.ci!.files[0],
      headers: [
        ['content-type', 'application/json'],
        ['authorization', `Bearer ${stack.secrets.ciOidcToken()}`],
      ],
    });
    if (taken(oidc)) accepted.push('ci-oidc');
    expect(accepted.sort()).toEqual([...Object.keys(registryFixtures), 'ci-oidc'].sort());
  });

  it('logged no configured secret and no path token, in any line of the whole run', () => {
    expect(capture.lines.length).toBeGreaterThan(20);
    expect(leaks(capture, stack.secrets)).toEqual([]);
  });
});
