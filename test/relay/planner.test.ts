import { describe, expect, it } from 'vitest';
import {
  buildRelayRequest,
  canCompare,
  checkGlob,
  classifyAgentStatus,
  coalesceKey,
  compileGlob,
  matchesPaths,
  matchesRepository,
  MAX_RETRY_AFTER_MS,
  mergePending,
  parseRetryAfter,
  selectRelayTargets,
  signBody,
  type PendingRelay,
  type RelaySelectable,
} from '../../src/planners/relay.js';

describe('relay planner', () => {
  describe('globs', () => {
    it.each([
      ['apps/*/overlays/prod', 'apps/web/overlays/prod', true],
      ['apps/*/overlays/prod', 'apps/web/api/overlays/prod', false],
      ['apps/**/prod', 'apps/prod', true],
      ['apps/**/prod', 'apps/a/b/c/prod', true],
      ['apps/**', 'apps/a/b', true],
      ['**', 'anything/at/all.yaml', true],
      ['**/*.yaml', 'top.yaml', true],
      ['**/*.yaml', 'a/b/deep.yaml', true],
      ['**/*.yaml', 'a/b/deep.yml', false],
      ['clusters/{dev,staging}/**', 'clusters/staging/app.yaml', true],
      ['clusters/{dev,staging}/**', 'clusters/prod/app.yaml', false],
      ['v?.yaml', 'v1.yaml', true],
      ['v?.yaml', 'v10.yaml', false],
      ['env-[abc].yaml', 'env-b.yaml', true],
      ['env-[!abc].yaml', 'env-b.yaml', false],
      ['a.b+c(d)', 'a.b+c(d)', true],
      ['a.b', 'axb', false],
    ])('%s against %s is %s', (pattern, path, expected) => {
      expect(compileGlob(pattern).test(path)).toBe(expected);
    });

    it('says why a glob cannot be used', () => {
      expect(checkGlob('')).toBe('is empty');
      expect(checkGlob('/apps')).toMatch(/relative to the repository root/);
      expect(checkGlob('{a,b')).toMatch(/never closed/);
      expect(checkGlob('a}')).toMatch(/never opened/);
      expect(checkGlob('apps/**')).toBeUndefined();
    });

    it('matches repositories without regard to case', () => {
      expect(matchesRepository(['example/gitops'], 'Example/GitOps')).toBe(true);
      expect(matchesRepository(['example/*'], 'example/anything')).toBe(true);
      expect(matchesRepository(['example/*'], 'other/gitops')).toBe(false);
      expect(matchesRepository(['*/*'], 'any/repo')).toBe(true);
    });

    it('matches a directory pattern against the files below it', () => {
      expect(matchesPaths(['apps/*/overlays/prod'], ['apps/web/overlays/prod/kustomization.yaml'])).toBe(true);
      expect(matchesPaths(['apps/*/overlays/prod/'], ['apps/web/overlays/prod/patch.yaml'])).toBe(true);
      expect(matchesPaths(['apps/*/overlays/prod'], ['apps/web/overlays/dev/kustomization.yaml'])).toBe(false);
      expect(matchesPaths(['apps/web'], ['apps/website/x.yaml'])).toBe(false);
      expect(matchesPaths(['**'], [])).toBe(false);
    });
  });

  describe('target selection', () => {
    const targets: RelaySelectable[] = [
      { name: 'argocd-prod', repos: ['example/gitops'], paths: ['apps/*/overlays/prod'], events: ['push'] },
      { name: 'argocd-all', repos: ['example/*'], paths: ['**'], events: ['push', 'pull_request'] },
      { name: 'flux-infra', repos: ['example/gitops'], paths: ['infra/**', 'clusters/**'], events: ['push'] },
      { name: 'flux-other', repos: ['other/*'], paths: ['**'], events: ['push'] },
    ];
    it.each([
      [
        'a prod overlay change',
        'push',
        'example/gitops',
        ['apps/web/overlays/prod/kustomization.yaml'],
        ['argocd-prod', 'argocd-all'],
      ],
      ['an infra change', 'push', 'example/gitops', ['infra/cert-manager.yaml'], ['argocd-all', 'flux-infra']],
      [
        'a change to both',
        'push',
        'example/gitops',
        ['README.md', 'clusters/a.yaml', 'apps/x/overlays/prod/p.yaml'],
        ['argocd-prod', 'argocd-all', 'flux-infra'],
      ],
      ['a README change', 'push', 'example/gitops', ['README.md'], ['argocd-all']],
      ['another repository of the owner', 'push', 'example/site', ['apps/web/overlays/prod/k.yaml'], ['argocd-all']],
      ['a repository nobody tracks', 'push', 'stranger/repo', ['apps/web/overlays/prod/k.yaml'], []],
      ['a pull request', 'pull_request', 'example/gitops', ['apps/web/overlays/prod/k.yaml'], ['argocd-all']],
      ['a push with no files (an empty commit, a deleted branch)', 'push', 'example/gitops', [], []],
    ] as const)('%s', (_, event, repository, changedPaths, expected) => {
      const selected = selectRelayTargets(targets, { event, repository, changedPaths: [...changedPaths] });
      expect(selected).toEqual(expected.map((target) => ({ target, narrowByCompare: false })));
    });

    it('selects on the repository alone when the file list was truncated, and asks the job to narrow', () => {
      expect(selectRelayTargets(targets, { event: 'push', repository: 'example/gitops', changedPaths: null })).toEqual([
        { target: 'argocd-prod', narrowByCompare: true },
        { target: 'argocd-all', narrowByCompare: true },
        { target: 'flux-infra', narrowByCompare: true },
      ]);
    });
  });

  describe('signing', () => {
    const body = '{"ref":"refs/heads/main","after":"b1a2"}';
    const secret = "It's a Secret to Everybody";
    // Computed independently: printf '%s' "$body" | openssl dgst -sha256 -hmac "$secret" (and -sha1)
    const sha256 = 'sha256=7327f42e914e082dea64c5e894d9a0d14fbf39af692b4dcbd4990b8570919b31';
    const sha1 = 'sha1=a534d5773065e09fba565bd6c69fd81746fd1a78';

    it("reproduces GitHub's documented test vector", () => {
      expect(signBody('sha256', secret, Buffer.from('Hello, World!'))).toBe(
        'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      );
    });

    it('signs the UTF-8 bytes of a body with non-ASCII text', () => {
      expect(signBody('sha256', 's3cr3t', Buffer.from('{"message":"déploiement ✓ 🚀"}', 'utf8'))).toBe(
        'sha256=ca71d85cf11c73c74b786bf230d7d84618b18950857262b8408dec3874f87380',
      );
    });

    it('gives Argo CD the GitHub headers with both signatures', () => {
      const request = buildRelayRequest(
        { type: 'argocd', url: 'https://argocd.example.com/api/webhook', secret, sha1Signature: true },
        { event: 'push', deliveryId: 'd-1', body },
      );
      expect(request).toEqual({
        url: 'https://argocd.example.com/api/webhook',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Escalator-Relay',
          'x-github-event': 'push',
          'x-github-delivery': 'd-1',
          'x-hub-signature-256': sha256,
          'x-hub-signature': sha1,
        },
        body: Buffer.from(body),
      });
    });

    it('leaves the SHA-1 signature out when the target does not want it', () => {
      const request = buildRelayRequest(
        { type: 'flux-github', url: 'http://flux/hook/abc', secret, sha1Signature: false },
        { event: 'push', deliveryId: 'd-1', body },
      );
      expect(request.headers['x-hub-signature-256']).toBe(sha256);
      expect(request.headers).not.toHaveProperty('x-hub-signature');
      expect(request.headers).not.toHaveProperty('x-signature');
    });

    it('signs Flux generic-hmac receivers with X-Signature', () => {
      const request = buildRelayRequest(
        { type: 'flux-generic-hmac', url: 'http://flux/hook/abc', secret, sha1Signature: false },
        { event: 'push', deliveryId: 'd-2', body },
      );
      expect(request.headers['x-signature']).toBe(sha256);
      expect(request.headers).not.toHaveProperty('x-hub-signature-256');
      expect(request.headers['content-type']).toBe('application/json');
    });

    it('uses the URL exactly as configured', () => {
      const url = 'https://flux.example.com/hook/4f1ce0a3c8f5e0e6b1f1d7a3b9c6e2d4a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3';
      expect(
        buildRelayRequest(
          { type: 'flux-github', url, secret, sha1Signature: false },
          { event: 'push', deliveryId: 'x', body },
        ).url,
      ).toBe(url);
    });
  });

  describe('coalescing', () => {
    const entry = (n: number, changedPaths: string[] | null, extra: Partial<PendingRelay> = {}): PendingRelay => ({
      deliveryId: `d-${n}`,
      event: 'push',
      body: `{"n":${n}}`,
      repository: 'example/gitops',
      changedPaths,
      receivedAt: `2026-01-01T00:00:0${n}.000Z`,
      ...extra,
    });

    it('keeps the newest payload and the union of paths', () => {
      const merged = mergePending([entry(1, ['b.yaml', 'a.yaml']), entry(2, ['c.yaml']), entry(3, ['a.yaml'])]);
      expect(merged).toEqual({
        newest: entry(3, ['a.yaml']),
        count: 3,
        deliveryIds: ['d-1', 'd-2', 'd-3'],
        changedPaths: ['a.yaml', 'b.yaml', 'c.yaml'],
        unknown: [],
      });
    });

    it('lists the payloads whose paths are unknown', () => {
      const merged = mergePending([
        entry(1, null, { before: 'aaa', after: 'bbb', installationId: 7 }),
        entry(2, ['x']),
      ]);
      expect(merged?.unknown).toEqual([{ deliveryId: 'd-1', before: 'aaa', after: 'bbb', installationId: 7 }]);
      expect(merged?.changedPaths).toEqual(['x']);
    });

    it('has nothing to merge in an empty window', () => {
      expect(mergePending([])).toBeNull();
    });

    it('keys pushes by ref and pull requests by number', () => {
      expect(coalesceKey('push', '{"ref":"refs/heads/main"}')).toBe('refs/heads/main');
      expect(coalesceKey('pull_request', '{"number":12,"pull_request":{"number":12}}')).toBe('pull-12');
      expect(coalesceKey('pull_request', '{"pull_request":{"number":5}}')).toBe('pull-5');
      expect(coalesceKey('push', 'not json')).toBe('unparsed');
      expect(coalesceKey('push', '[]')).toBe('no-ref');
    });

    it('compares only ranges with both ends, an installation, and no created or deleted branch', () => {
      const zero = '0000000000000000000000000000000000000000';
      expect(canCompare({ before: 'a1', after: 'b2', installationId: 1 })).toBe(true);
      expect(canCompare({ before: zero, after: 'b2', installationId: 1 })).toBe(false);
      expect(canCompare({ before: 'a1', after: zero, installationId: 1 })).toBe(false);
      expect(canCompare({ before: 'a1', after: 'b2' })).toBe(false);
      expect(canCompare({ after: 'b2', installationId: 1 })).toBe(false);
    });
  });

  describe('agent answers', () => {
    it.each([
      [200, 'delivered'],
      [202, 'delivered'],
      [204, 'delivered'],
      [500, 'retry'],
      [502, 'retry'],
      [503, 'retry'],
      [429, 'retry'],
      [408, 'retry'],
      [400, 'reject'],
      [401, 'reject'],
      [403, 'reject'],
      [404, 'reject'],
      [405, 'reject'],
      [301, 'reject'],
      [307, 'reject'],
    ] as const)('HTTP %i is %s', (status, verdict) => {
      expect(classifyAgentStatus(status)).toBe(verdict);
    });

    const now = Date.parse('2026-03-01T12:00:00Z');
    it.each([
      ['120', now + 120_000],
      [' 0 ', now],
      ['Sun, 01 Mar 2026 12:00:30 GMT', now + 30_000],
      ['Sun, 01 Mar 2026 11:00:00 GMT', now],
      ['999999', now + MAX_RETRY_AFTER_MS],
      ['soon', undefined],
      ['-5', undefined],
      [undefined, undefined],
    ] as const)('Retry-After %j waits until %j', (value, expected) => {
      expect(parseRetryAfter(value, now)).toBe(expected);
    });
  });
});
