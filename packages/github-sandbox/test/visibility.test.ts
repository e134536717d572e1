import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

/**
 * Repository visibility as `GET /repos/{owner}/{repo}` reports it: `private` (required by the
 * full-repository schema of GitHub's OpenAPI description) and `visibility` ("The repository
 * visibility: public, private, or internal."). Every exchange is checked against that description
 * (`expectGitHubShaped`). A repository that is not public is hidden (404) from a user with no
 * permission on it, as GitHub hides it.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

describe('repository visibility', () => {
  it.each(['public', 'private', 'internal'] as const)('reports a %s repository as GitHub does', async (visibility) => {
    const created = await h.client.createRepo({
      owner: 'example',
      name: `seen-${visibility}`,
      files: { 'a.txt': 'a\n' },
      visibility,
    });
    const octokit = await h.installationOctokit(created.installation_id!);
    const { data } = await octokit.rest.repos.get({ owner: 'example', repo: `seen-${visibility}` });
    expect({ private: data.private, visibility: data.visibility }).toEqual({
      private: visibility !== 'public',
      visibility,
    });
  });

  it('is public unless asked, and refuses a visibility GitHub does not have', async () => {
    const created = await h.client.createRepo({ owner: 'example', name: 'plain', files: { 'a.txt': 'a\n' } });
    const octokit = await h.installationOctokit(created.installation_id!);
    expect((await octokit.rest.repos.get({ owner: 'example', repo: 'plain' })).data).toMatchObject({
      private: false,
      visibility: 'public',
    });
    await expect(
      h.client.createRepo({ owner: 'example', name: 'odd', visibility: 'secret' as 'private' }),
    ).rejects.toThrow(/visibility must be public, private or internal/);
  });

  it('hides a private repository from a user without a permission on it, not a public one', async () => {
    await h.client.createRepo({ owner: 'example', name: 'hidden', files: { 'a.txt': 'a\n' }, visibility: 'private' });
    await h.client.createRepo({ owner: 'example', name: 'open', files: { 'a.txt': 'a\n' } });
    const stranger = await h.client.createUser('stranger');
    const octokit = h.userOctokit(stranger.token!);
    await expect(octokit.rest.repos.get({ owner: 'example', repo: 'hidden' })).rejects.toMatchObject({ status: 404 });
    expect((await octokit.rest.repos.get({ owner: 'example', repo: 'open' })).status).toBe(200);
  });
});
