import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAuthFile } from '../../src/adapters/registry/auth-file.js';
import { isInternalHost, parseChallenge, RegistryAccess, RegistryClient } from '../../src/adapters/registry/client.js';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';

const SOURCE = 'https://github.com/example/hello';
const REVISION = 'a'.repeat(40);

/**
 * The registry client against Debian's `docker-registry` (CNCF Distribution 2.8), images pushed
 * by `skopeo`: one open registry, one behind htpasswd basic auth.
 */
describe('RegistryClient', () => {
  let open: LocalRegistry;
  let locked: LocalRegistry;
  const calls: Array<{ host: string; kind: string; status: number }> = [];

  beforeAll(async () => {
    [open, locked] = await Promise.all([startRegistry(), startRegistry({ username: 'ci', password: 's3cret-pass' })]);
  }, 60_000);
  afterAll(() => {
    open?.close();
    locked?.close();
  });

  describe('when the image is a single manifest with labels', () => {
    it('reads digest, created time, platform, size and the source labels', { timeout: 60_000 }, async () => {
      const digest = await open.push('team/app', '1.0.0', {
        labels: { 'org.opencontainers.image.source': SOURCE, 'org.opencontainers.image.revision': REVISION },
        created: '2026-11-30T10:00:00Z',
        layerBytes: 1000,
      });
      // A loopback registry is read over plain HTTP only when asked for (or when the credentials name it).
      const client = new RegistryClient({ onRequest: (info) => calls.push(info), plainHttp: () => true });
      const facts = await client.inspect(`${open.host}/team/app`, '1.0.0');
      expect(facts).toMatchObject({
        repository: `${open.host}/team/app`,
        tag: '1.0.0',
        digest,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        created: '2026-11-30T10:00:00Z',
        platforms: ['linux/amd64'],
        source: SOURCE,
        revision: REVISION,
      });
      // The one layer (1000 bytes) and the config.
      expect(facts!.size).toBeGreaterThan(1000);
      expect(facts!.size).toBeLessThan(1500);
      expect(await client.resolve(`${open.host}/team/app`, '1.0.0')).toEqual({
        digest,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
      });
    });
  });

  describe('when the tag is a multi-arch index', () => {
    it('lists its platforms and reads annotations of the index before labels', { timeout: 60_000 }, async () => {
      const digest = await open.push('team/multi', '2.0.0', {
        platforms: ['linux/amd64', 'linux/arm64/v8'],
        labels: {
          'org.opencontainers.image.source': 'https://github.com/example/old',
          'org.opencontainers.image.version': '2.0.0',
        },
        indexAnnotations: {
          'org.opencontainers.image.source': SOURCE,
          'org.opencontainers.image.revision': REVISION,
          'org.opencontainers.image.created': '2026-12-01T08:30:00Z',
        },
      });
      const facts = await new RegistryClient({ plainHttp: () => true }).inspect(`${open.host}/team/multi`, '2.0.0');
      expect(facts).toMatchObject({
        digest,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        platforms: ['linux/amd64', 'linux/arm64/v8'],
        sizePlatform: 'linux/amd64',
        source: SOURCE,
        revision: REVISION,
        version: '2.0.0',
        created: '2026-12-01T08:30:00Z',
      });
    });
  });

  describe('when the images are Docker schema 2 (a manifest list)', () => {
    it('reads them as it reads OCI ones', { timeout: 60_000 }, async () => {
      const digest = await open.push('team/docker', '3.0.0', {
        format: 'docker',
        platforms: ['linux/amd64', 'linux/arm/v7'],
        labels: { 'org.opencontainers.image.source': SOURCE, 'org.opencontainers.image.revision': REVISION },
        created: '2026-10-01T12:00:00Z',
      });
      const facts = await new RegistryClient({ plainHttp: () => true }).inspect(`${open.host}/team/docker`, '3.0.0');
      expect(facts).toMatchObject({
        digest,
        mediaType: 'application/vnd.docker.distribution.manifest.list.v2+json',
        platforms: ['linux/amd64', 'linux/arm/v7'],
        created: '2026-10-01T12:00:00Z',
        source: SOURCE,
        revision: REVISION,
      });
    });
  });

  describe('when the tag or digest is unknown', () => {
    it('answers null', { timeout: 30_000 }, async () => {
      const client = new RegistryClient({ plainHttp: () => true });
      expect(await client.resolve(`${open.host}/team/app`, 'no-such-tag')).toBeNull();
      expect(await client.resolve(`${open.host}/team/app`, `sha256:${'1'.repeat(64)}`)).toBeNull();
      expect(await client.inspect(`${open.host}/team/none`, '1.0.0')).toBeNull();
    });
  });

  describe('when a loopback registry is not named in the credentials', () => {
    it('is not called, and says how to allow it', async () => {
      await expect(new RegistryClient().resolve(`${open.host}/team/app`, '1.0.0')).rejects.toThrow(
        `Escalator reads a registry on this machine or its private network (${open.host}) only when ESCALATOR_REGISTRY_AUTH_FILE names it`,
      );
    });

    it('reads every spelling of an internal address as internal, and public names as public', () => {
      for (const host of [
        '127.1:5000',
        '0.0.0.0:5000',
        '10.0.0.5:8443',
        '172.16.3.4',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '[::1]:5000',
        '[::ffff:7f00:1]:5000',
        '[fd00::1]',
        'localhost:5000',
        'registry.localhost',
      ])
        expect(isInternalHost(host), host).toBe(true);
      for (const host of ['ghcr.io', 'registry-1.docker.io', '8.8.8.8', '172.32.0.1', '[2001:db8::1]'])
        expect(isInternalHost(host), host).toBe(false);
    });
  });

  describe('when the registry is behind htpasswd basic auth', () => {
    it('answers the Basic challenge with the credential of the Docker config.json', { timeout: 60_000 }, async () => {
      const digest = await locked.push('team/private', '3.1.0', {
        labels: { 'org.opencontainers.image.source': SOURCE },
      });
      const auth = parseAuthFile(
        JSON.stringify({
          auths: { [locked.host]: { auth: Buffer.from('ci:s3cret-pass').toString('base64'), owners: ['example'] } },
        }),
        'test',
      );
      if (!auth.ok) throw new Error(auth.problems.join('; '));
      const client = new RegistryAccess(auth.entries).forOwner('Example');
      expect(client.hasCredentials(locked.host)).toBe(true);
      expect(await client.inspect(`${locked.host}/team/private`, '3.1.0')).toMatchObject({ digest, source: SOURCE });
    });

    it("reads for another owner anonymously, never with the entry's credential", { timeout: 60_000 }, async () => {
      await locked.push('team/private', '3.2.0', { seed: 32 });
      const auth = parseAuthFile(
        JSON.stringify({
          auths: {
            [locked.host]: { auth: Buffer.from('ci:s3cret-pass').toString('base64'), owners: ['example'] },
            [`${locked.host}/acme`]: { username: 'ci', password: 'wrong-pass', owners: ['acme'] },
          },
        }),
        'test',
      );
      if (!auth.ok) throw new Error(auth.problems.join('; '));
      const access = new RegistryAccess(auth.entries);
      const acme = access.forOwner('acme');
      // example's entry is not acme's: the loopback host stays reachable (the operator named it), unauthenticated.
      expect(acme.hasCredentials(`${locked.host}/team/private`)).toBe(false);
      await expect(acme.resolve(`${locked.host}/team/private`, '3.2.0')).rejects.toThrow(/\(401\)/);
      // acme's own namespace entry is the most specific for acme's images, and only acme's.
      expect(acme.hasCredentials(`${locked.host}/acme/api`)).toBe(true);
      await expect(acme.resolve(`${locked.host}/acme/api`, '1.0.0')).rejects.toThrow(/\(401\)/);
      expect(access.forOwner('example').hasCredentials(`${locked.host}/acme/api`)).toBe(true);
      expect(await access.forOwner('example').resolve(`${locked.host}/team/private`, '3.2.0')).toMatchObject({
        digest: expect.stringMatching(/^sha256:/),
      });
    });

    it('says what to do without a credential, and never shows the password', { timeout: 30_000 }, async () => {
      const anonymous = new RegistryClient({ plainHttp: () => true });
      await expect(anonymous.resolve(`${locked.host}/team/private`, '3.1.0')).rejects.toThrow(
        /refused to serve the manifest team\/private:3\.1\.0 \(401\); add a credential for 127\.0\.0\.1:\d+ to ESCALATOR_REGISTRY_AUTH_FILE whose owners include this repository's owner/,
      );
      const wrong = parseAuthFile(
        JSON.stringify({ auths: { [locked.host]: { username: 'ci', password: 'wrong-pass', owners: ['*'] } } }),
        't',
      );
      if (!wrong.ok) throw new Error('unreadable');
      const error = await new RegistryAccess(wrong.entries)
        .forOwner('anyone')
        .resolve(`${locked.host}/team/private`, '3.1.0')
        .catch((e: Error) => e);
      expect(String(error)).toMatch(/401/);
      expect(String(error)).not.toContain('wrong-pass');
    });
  });
});

/**
 * Docker's token protocol (https://distribution.github.io/distribution/spec/auth/token/) and the
 * retry rules, against a server that speaks them: a registry answering 401 with a Bearer challenge,
 * a realm handing out a token for the credential, and 429 with Retry-After.
 */
describe('RegistryClient with a token realm', () => {
  let server: Server;
  let host: string;
  const seen: string[] = [];
  let throttle = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(
        `${req.method} ${req.url} ${req.headers.authorization ? req.headers.authorization.split(' ')[0] : '-'}`,
      );
      if (req.url?.startsWith('/token') && req.method === 'GET') {
        const url = new URL(req.url, 'http://x');
        if (req.headers.authorization !== `Basic ${Buffer.from('bot:tok-pass').toString('base64')}`) {
          res.writeHead(401).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ token: `T-${url.searchParams.get('scope')}`, expires_in: 300 }));
        return;
      }
      if (req.url === '/token' && req.method === 'POST') {
        let form = '';
        req.on('data', (chunk: Buffer) => (form += chunk.toString()));
        req.on('end', () => {
          const params = new URLSearchParams(form);
          const ok = params.get('grant_type') === 'refresh_token' && params.get('refresh_token') === 'refresh-me';
          res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
          res.end(ok ? JSON.stringify({ access_token: `T-${params.get('scope')}` }) : '');
        });
        return;
      }
      if (
        req.url?.startsWith('/v2/team/app/blobs/') &&
        req.headers.authorization === 'Bearer T-repository:team/app:pull'
      ) {
        res.writeHead(307, { location: `http://${store}/blob` }).end();
        return;
      }
      if (req.headers.authorization !== 'Bearer T-repository:team/app:pull') {
        res.writeHead(401, {
          'www-authenticate': `Bearer realm="http://${host}/token",service="test-registry",scope="repository:team/app:pull"`,
        });
        res.end();
        return;
      }
      if (throttle > 0) {
        throttle--;
        res.writeHead(429, { 'retry-after': '0' }).end();
        return;
      }
      res.writeHead(200, {
        'content-type': 'application/vnd.oci.image.manifest.v1+json',
        'docker-content-digest': `sha256:${'2'.repeat(64)}`,
      });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  // A blob store on another origin, as S3 behind a registry: it must never see the registry's credentials.
  let blobServer: Server;
  let store = '';
  const blobAuth: Array<string | undefined> = [];
  const BLOB = Buffer.from('{"config":{"Labels":{}}}');
  const BLOB_DIGEST = `sha256:${createHash('sha256').update(BLOB).digest('hex')}`;
  beforeAll(async () => {
    blobServer = createServer((req, res) => {
      blobAuth.push(req.headers.authorization);
      res.writeHead(200).end(BLOB);
    });
    await new Promise<void>((resolve) => blobServer.listen(0, '127.0.0.1', resolve));
    store = `127.0.0.1:${(blobServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => blobServer.close(() => resolve())));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('gets a token with the basic credential, keeps it, and retries a 429 after Retry-After', async () => {
    const client = new RegistryClient({
      credentials: new Map([[host, { kind: 'basic', username: 'bot', password: 'tok-pass' }]]),
    });
    expect(await client.resolve(`${host}/team/app`, '1.0')).toEqual({
      digest: `sha256:${'2'.repeat(64)}`,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
    });
    throttle = 1;
    expect((await client.resolve(`${host}/team/app`, '1.1'))?.digest).toBe(`sha256:${'2'.repeat(64)}`);
    expect(seen).toEqual([
      'HEAD /v2/team/app/manifests/1.0 -',
      'GET /token?service=test-registry&scope=repository%3Ateam%2Fapp%3Apull Basic',
      'HEAD /v2/team/app/manifests/1.0 Bearer',
      'HEAD /v2/team/app/manifests/1.1 Bearer',
      'HEAD /v2/team/app/manifests/1.1 Bearer',
    ]);
  });

  it('follows a blob redirect to another origin without the Authorization header', async () => {
    const client = new RegistryClient({
      credentials: new Map([[host, { kind: 'basic', username: 'bot', password: 'tok-pass' }]]),
    });
    expect((await client.blob(`${host}/team/app`, BLOB_DIGEST)).equals(BLOB)).toBe(true);
    expect(blobAuth).toEqual([undefined]);
  });

  it('exchanges an identity token at the realm as an OAuth2 refresh token', async () => {
    const client = new RegistryClient({
      credentials: new Map([[host, { kind: 'identity-token', username: '', token: 'refresh-me' }]]),
    });
    expect((await client.resolve(`${host}/team/app`, '1.0'))?.digest).toBe(`sha256:${'2'.repeat(64)}`);
    await expect(
      new RegistryClient({
        credentials: new Map([[host, { kind: 'identity-token', username: '', token: 'stale' }]]),
      }).resolve(`${host}/team/app`, '1.0'),
    ).rejects.toThrow(/refused the credential of ESCALATOR_REGISTRY_AUTH_FILE for repository:team\/app:pull with 401/);
  });

  it("never answers for one owner with a registry token another owner's credential obtained", async () => {
    const access = new RegistryAccess([
      { key: host, owners: ['example'], credential: { kind: 'basic', username: 'bot', password: 'tok-pass' } },
    ]);
    expect((await access.forOwner('example').resolve(`${host}/team/app`, '1.0'))?.digest).toBe(
      `sha256:${'2'.repeat(64)}`,
    );
    seen.length = 0;
    // acme holds no entry: its request carries no token, and the realm refuses it anonymously.
    await expect(access.forOwner('acme').resolve(`${host}/team/app`, '1.0')).rejects.toThrow(
      /refused an anonymous pull for repository:team\/app:pull with 401/,
    );
    expect(seen).toEqual([
      'HEAD /v2/team/app/manifests/1.0 -',
      'GET /token?service=test-registry&scope=repository%3Ateam%2Fapp%3Apull -',
    ]);
  });

  it('spaces calls to one host by its token bucket', async () => {
    let clock = 0;
    const waits: number[] = [];
    const client = new RegistryClient({
      credentials: new Map([[host, { kind: 'basic', username: 'bot', password: 'tok-pass' }]]),
      ratePerSecond: 2,
      burst: 1,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    await client.resolve(`${host}/team/app`, '1.0');
    // Three requests (challenge, token, retry) at 2 per second after a burst of one: two waits of 500 ms.
    expect(waits).toEqual([500, 500]);
  });
});

describe('parseChallenge', () => {
  it('reads quoted parameters holding commas', () => {
    expect(
      parseChallenge('Bearer realm="https://auth.example.com/token",service="reg",scope="repository:a/b:pull,push"'),
    ).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example.com/token', service: 'reg', scope: 'repository:a/b:pull,push' },
    });
  });
});

describe('parseAuthFile', () => {
  it('reads auth, username/password and identity tokens by host or namespace, Docker Hub under docker.io, each with its owners', () => {
    const result = parseAuthFile(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': {
            auth: Buffer.from('hub:pw:with:colons').toString('base64'),
            owners: ['Example', 'example'],
          },
          'ghcr.io': { username: 'bot', password: 'ghp', owners: ['*'] },
          'ghcr.io/acme/': { username: 'acme-bot', password: 'acme-pat', owners: ['acme'] },
          'https://Registry.Example.com:5000': { identitytoken: 'refresh', owners: ['example', 'acme'] },
          'quay.io': {},
        },
        credsStore: 'desktop',
      }),
      'config.json',
    );
    expect(result).toEqual({
      ok: true,
      entries: [
        {
          key: 'docker.io',
          owners: ['example'],
          credential: { kind: 'basic', username: 'hub', password: 'pw:with:colons' },
        },
        { key: 'ghcr.io', owners: '*', credential: { kind: 'basic', username: 'bot', password: 'ghp' } },
        {
          key: 'ghcr.io/acme',
          owners: ['acme'],
          credential: { kind: 'basic', username: 'acme-bot', password: 'acme-pat' },
        },
        {
          key: 'registry.example.com:5000',
          owners: ['example', 'acme'],
          credential: { kind: 'identity-token', username: '', token: 'refresh' },
        },
      ],
    });
  });

  it('refuses an entry without owners with the line to add, and never names the secret', () => {
    const result = parseAuthFile(
      JSON.stringify({
        auths: {
          'ghcr.io': { auth: Buffer.from('bot:ghp-secret').toString('base64') },
          'quay.io': { username: 'q', password: 'quay-secret', owners: ['*', 'example'] },
          'docker.io': { username: 'd', password: 'hub-secret', owners: ['not a login'] },
        },
      }),
      'f',
    );
    expect(result).toEqual({
      ok: false,
      problems: [
        'f: auths.ghcr.io names no owners, so Escalator does not know whose images its credential may read; add "owners": ["<GitHub owner>"] to it ("ghcr.io": {"auth": "…", "owners": ["<GitHub owner>"]}), the organisations or users whose installations may read with it, or "owners": ["*"] to let every installation read with it, on purpose (docs/registries.md, "Giving Escalator registry credentials")',
        'f: auths.quay.io.owners lists "*" beside owners; write ["*"] alone (every installation) or the owners alone',
        'f: auths.docker.io.owners has "not a login", which is not a GitHub login; write organisation or user logins such as "example"',
      ],
    });
    expect(JSON.stringify(result)).not.toMatch(/secret/);
  });

  it('names the problem without the secret', () => {
    const result = parseAuthFile(
      JSON.stringify({
        auths: { 'ghcr.io': { auth: Buffer.from('nocolon-secret').toString('base64'), owners: ['example'] } },
      }),
      'f',
    );
    expect(result).toEqual({
      ok: false,
      problems: ['f: auths.ghcr.io.auth is not base64 of "user:password"; run docker login again or fix it'],
    });
    expect(parseAuthFile('{', 'f')).toMatchObject({ ok: false });
  });
});
