import { describe, expect, it } from 'vitest';
import { forecastImage, withinScope, type IndexedRepoView } from '../../src/events/image-forecast.js';

/** The pure forecast the intake answers with (issue 35 §3): the same rules as the image job, from the index alone. */

const acme = { by: 'token:acme-ci', owners: ['acme'] };
const config = (from: string, policy: 'newest' | 'semver' = 'semver'): IndexedRepoView['config'] => ({
  environments: [{ name: 'dev', from }],
  images: [{ name: 'ghcr.io/acme/api', policy, pinDigest: false }],
});
const repo = (over: Partial<IndexedRepoView> = {}): IndexedRepoView => ({
  owner: 'acme',
  repo: 'gitops',
  config: config('registry'),
  files: [{ environment: 'dev', app: 'api', images: ['ghcr.io/acme/api'] }],
  ...over,
});
const forecast = (repos: IndexedRepoView[], tag = '1.5.0', scope: typeof acme | { by: string; owners: '*' } = acme) =>
  forecastImage({ name: 'ghcr.io/acme/api', repository: 'ghcr.io/acme/api', tag, scope, repos, indexBuilt: true });

describe('forecastImage', () => {
  it('names each target of a repository that takes the image, once per environment and app', () => {
    const files = [
      { environment: 'dev', app: 'api', images: ['ghcr.io/acme/api'] },
      { environment: 'dev', app: 'api', images: ['ghcr.io/acme/api', 'ghcr.io/acme/worker'] },
    ];
    expect(forecast([repo({ files })])).toEqual({
      will: 'bump',
      detail:
        'acme/gitops (dev/api) will get a bump to 1.5.0, once the registry confirms the image where the owner configured credentials for it',
      repositories: [{ repository: 'acme/gitops', takes: [{ environment: 'dev', app: 'api' }] }],
    });
  });

  it('says why nothing changes: an environment that takes images by promotion only', () => {
    expect(forecast([repo({ config: config('staging') })])).toMatchObject({
      will: 'nothing',
      reason: 'no-environment',
      detail:
        'nothing changes: acme/gitops: ghcr.io/acme/api is used there only in environments that take images by promotion, not from the registry (from: registry)',
    });
  });

  it('says why nothing changes: the tag policy, then an invalid configuration', () => {
    const refused = forecast([repo(), repo({ repo: 'paused', config: null })], 'nightly');
    expect(refused).toMatchObject({ will: 'nothing', reason: 'tag-policy' });
    expect(refused.repositories.map((r) => ('reason' in r ? r.reason : 'takes'))).toEqual([
      'tag-policy',
      'config-invalid',
    ]);
    expect(forecast([repo({ config: null })])).toMatchObject({ will: 'nothing', reason: 'config-invalid' });
  });

  it('says the same for an image no one uses as for one only other owners use: withinScope leaves nothing to name', () => {
    const using = [{ owner: 'Example', repo: 'gitops', installationId: 2 }];
    expect(withinScope(acme, using)).toEqual([]);
    expect(withinScope({ by: 'legacy', owners: '*' }, using)).toEqual(using);
    expect(forecast([])).toEqual({
      will: 'nothing',
      reason: 'no-environment',
      detail:
        "no environment in a repository of acme uses ghcr.io/acme/api, so nothing changes; reference the image in an environment's files (from: registry), or send it with the credential of the owner that uses it",
      repositories: [],
    });
  });

  it('is unknown while the index is being rebuilt', () => {
    expect(
      forecastImage({ name: 'x', repository: 'x', tag: '1', scope: acme, repos: [], indexBuilt: false }),
    ).toMatchObject({ will: 'unknown', reason: 'index-rebuilding' });
  });
});
