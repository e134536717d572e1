import { describe, expect, it } from 'vitest';
import { normalizeCiImage } from '../../src/events/index.js';
import { normalizeGithub } from '../../src/events/registries/github.js';
import { fixtureJson } from '../support/registry-fixtures.js';

const ctx = { deliveryId: 'delivery-1', receivedAt: '2026-01-02T03:04:05.000Z' };
const SHA = 'a'.repeat(40);

describe('ci: source and revision', () => {
  it('carries them into the event, for both body forms', () => {
    for (const body of [
      { image: 'ghcr.io/example/hello:1.2.3', source: 'https://github.com/example/hello', revision: SHA },
      { repository: 'ghcr.io/example/hello', tag: '1.2.3', source: 'https://github.com/example/hello', revision: SHA },
    ])
      expect(normalizeCiImage(body, ctx)).toEqual({
        kind: 'images',
        events: [
          {
            registry: 'ghcr.io',
            repository: 'ghcr.io/example/hello',
            tag: '1.2.3',
            source: 'ci',
            deliveryId: 'delivery-1',
            receivedAt: '2026-01-02T03:04:05.000Z',
            sourceUrl: 'https://github.com/example/hello',
            revision: SHA,
          },
        ],
      });
  });

  it.each([
    [{ source: 'javascript:alert(1)' }, /source "javascript:alert\(1\)" is not a repository URL/],
    [{ revision: 'main' }, /revision "main" is not a commit SHA/],
    [{ revision: 'A'.repeat(40) }, /is not a commit SHA/],
    [{ source: 42 }, /source must be string/],
  ])('refuses %j', (extra, message) => {
    const result = normalizeCiImage({ repository: 'ghcr.io/example/hello', tag: '1.2.3', ...extra }, ctx);
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && result.message).toMatch(message);
  });
});

describe('github: the source and revision labels GitHub read from the image', () => {
  const payload = (labels: Record<string, string>) => {
    const body = fixtureJson('github/package-published-multiarch.json') as {
      package: { package_version: { container_metadata: { labels: Record<string, unknown> } } };
    };
    Object.assign(body.package.package_version.container_metadata.labels, labels);
    return body;
  };

  it('carries them into the event when they are well formed', () => {
    const result = normalizeGithub(payload({ source: 'https://github.com/theryangeary/www', revision: SHA }), ctx);
    expect(result.kind === 'images' && result.events[0]).toMatchObject({
      repository: 'ghcr.io/theryangeary/www',
      sourceUrl: 'https://github.com/theryangeary/www',
      revision: SHA,
    });
  });

  it('leaves them out when GitHub sends them empty or malformed', () => {
    for (const labels of [{}, { source: 'not a url', revision: 'main' }] as Array<Record<string, string>>) {
      const result = normalizeGithub(payload(labels), ctx);
      expect(result.kind).toBe('images');
      expect(result.kind === 'images' && result.events[0]).not.toHaveProperty('sourceUrl');
      expect(result.kind === 'images' && result.events[0]).not.toHaveProperty('revision');
    }
  });
});
