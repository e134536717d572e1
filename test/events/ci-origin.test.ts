import { describe, expect, it } from 'vitest';
import { normalizeCiImage } from '../../src/events/index.js';

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
