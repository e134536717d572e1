import { generateKeyPairSync } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, signAppJwt, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let installationId: number;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  h = await startHarness();
  installationId = (await h.seedRepo('one', { a: '1' })).installationId;
  await h.seedRepo('two', { b: '2' });
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

function withJwt(jwt: string): Octokit {
  return new Octokit({ baseUrl: h.sim.apiUrl, auth: jwt, log: quiet });
}

describe('the App JWT', () => {
  it('opens /app endpoints: the App, its installations, one installation', async () => {
    const app = h.appOctokit();
    expect((await app.rest.apps.getAuthenticated()).data).toMatchObject({ id: h.sim.app.id, slug: 'escalator' });
    const installations = await app.rest.apps.listInstallations();
    expect(installations.data.map((i) => i.account?.login)).toEqual(['example']);
    expect((await app.rest.apps.getInstallation({ installation_id: installationId })).data.app_id).toBe(h.sim.app.id);
  });

  it('is refused when expired, too long, issued in the future, signed by another key or for another App', async () => {
    const now = Date.now();
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs1', format: 'pem' })
      .toString();
    const cases: [string, string][] = [
      [
        signAppJwt(h.sim.app.id, h.sim.app.privateKey, now - 20 * 60_000),
        "'Expiration time' claim ('exp') must be a numeric value",
      ],
      [
        signAppJwt(h.sim.app.id, h.sim.app.privateKey, now, { exp: Math.floor(now / 1000) + 3600 }),
        "'Expiration time' claim ('exp') is too far in the future",
      ],
      [
        signAppJwt(h.sim.app.id, h.sim.app.privateKey, now + 10 * 60_000),
        "'Issued at' claim ('iat') must be an Integer",
      ],
      [signAppJwt(h.sim.app.id, other, now), 'A JSON web token could not be decoded'],
      [signAppJwt(h.sim.app.id + 1, h.sim.app.privateKey, now), 'A JSON web token could not be decoded'],
    ];
    for (const [jwt, message] of cases) {
      const error = await withJwt(jwt)
        .rest.apps.getAuthenticated()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 401 });
      expect((error as { response: { data: { message: string } } }).response.data.message).toContain(message);
    }
  });

  it('does not open repository endpoints', async () => {
    await expect(h.appOctokit().rest.repos.get({ owner: 'example', repo: 'one' })).rejects.toMatchObject({
      status: 403,
    });
  });
});

describe('installation tokens', () => {
  it("cover the installation's repositories and expire after an hour", async () => {
    const { data } = await h.appOctokit().rest.apps.createInstallationAccessToken({ installation_id: installationId });
    expect(data.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    expect(Date.parse(data.expires_at) - Date.now()).toBeGreaterThan(59 * 60_000);
    const octokit = new Octokit({ baseUrl: h.sim.apiUrl, auth: data.token, log: quiet });
    const repos = await octokit.rest.apps.listReposAccessibleToInstallation();
    expect(repos.data.repositories.map((r) => r.full_name)).toEqual(['example/one', 'example/two']);
    await h.client.advanceClock(3601);
    try {
      await expect(octokit.rest.repos.get({ owner: 'example', repo: 'one' })).rejects.toMatchObject({
        status: 401,
        response: { data: { message: 'Bad credentials' } },
      });
    } finally {
      await h.client.advanceClock(-3601);
    }
  });

  it('can be limited to some repositories', async () => {
    const { data } = await h
      .appOctokit()
      .rest.apps.createInstallationAccessToken({ installation_id: installationId, repositories: ['one'] });
    const octokit = new Octokit({ baseUrl: h.sim.apiUrl, auth: data.token, log: quiet });
    expect((await octokit.rest.repos.get({ owner: 'example', repo: 'one' })).status).toBe(200);
    await expect(octokit.rest.repos.get({ owner: 'example', repo: 'two' })).rejects.toMatchObject({ status: 404 });
  });

  it("answers 401 with GitHub's body for unknown tokens and for no token", async () => {
    const unknown = new Octokit({
      baseUrl: h.sim.apiUrl,
      auth: 'ghs_unknownunknownunknownunknownunknown1',
      log: quiet,
    });
    await expect(unknown.rest.repos.get({ owner: 'example', repo: 'one' })).rejects.toMatchObject({
      status: 401,
      response: { data: { message: 'Bad credentials', documentation_url: expect.any(String) } },
    });
    const anonymous = new Octokit({ baseUrl: h.sim.apiUrl, log: quiet });
    await expect(anonymous.rest.repos.get({ owner: 'example', repo: 'one' })).rejects.toMatchObject({ status: 401 });
  });
});

describe('user tokens', () => {
  it('act as the user: read anywhere, write with push access only', async () => {
    const stranger = await h.client.createUser('stranger');
    const octokit = h.userOctokit(stranger.token ?? '');
    const repo = await octokit.rest.repos.get({ owner: 'example', repo: 'one' });
    expect(repo.data.permissions).toMatchObject({ pull: true, push: false, admin: false });
    await expect(octokit.rest.git.createBlob({ owner: 'example', repo: 'one', content: 'x' })).rejects.toMatchObject({
      status: 403,
    });
    const admin = await h.userOctokit().rest.repos.get({ owner: 'example', repo: 'one' });
    expect(admin.data.permissions).toMatchObject({ admin: true, push: true });
  });

  it('are required by the control API', async () => {
    await expect(h.client.as('ghp_nope').info()).rejects.toMatchObject({ status: 401 });
    expect((await h.client.info()).app.id).toBe(h.sim.app.id);
  });
});
