import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImagePublished, normalizeCiImage, normalizers } from '../../src/events/index.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from '../../src/events/index.js';

/**
 * Whatever arrives, a normalizer answers (never throws), and every event it returns satisfies
 * the ImagePublished schema: intake can enqueue it as job data without a second check failing.
 */

const ctx: NormalizeContext = { deliveryId: 'delivery-1', receivedAt: '2026-01-02T03:04:05.000Z' };
const all: [string, Normalizer][] = [...Object.entries(normalizers), ['ci', normalizeCiImage]];

function wellFormed(result: NormalizeResult): void {
  expect(['images', 'ignored', 'invalid']).toContain(result.kind);
  if (result.kind === 'images') {
    expect(result.events.length).toBeGreaterThan(0);
    for (const e of result.events) expect(ImagePublished.safeParse(e).success).toBe(true);
  }
  if (result.kind === 'invalid') expect(result.message.length).toBeGreaterThan(0);
}

const text = fc.oneof(fc.string(), fc.constantFrom('', 'v1', 'latest', '-x', 'sha256:' + 'a'.repeat(64), 'sha256-' + 'a'.repeat(64) + '.sig', 'Team/App', 'team/app', 'r.example.com:5000', 'push', 'PUSH', 'INSERT'));
/** Payloads shaped like each sender's, with every field drawn from odd and ordinary values. */
const shaped = fc.oneof(
  fc.record({ push_data: fc.record({ tag: text }), repository: fc.record({ repo_name: text }) }),
  fc.record({ docker_url: text, updated_tags: fc.array(text) }),
  fc.record({ action: text, target: fc.record({ repository: text, tag: text, digest: text, mediaType: text }), request: fc.record({ host: text }) }),
  fc.record({ events: fc.array(fc.record({ action: fc.constantFrom('push', 'pull', 'delete', 'mount'), target: fc.record({ repository: text, tag: text, digest: text, mediaType: text, url: text }), request: fc.record({ host: text }) })) }),
  fc.record({ type: fc.constantFrom('PUSH_ARTIFACT', 'PULL_ARTIFACT'), event_data: fc.record({ resources: fc.array(fc.record({ tag: text, digest: text, resource_url: text })), repository: fc.record({ repo_full_name: text }) }) }),
  fc.record({ 'detail-type': fc.constant('ECR Image Action'), account: fc.constantFrom('123456789012', 'x'), region: fc.constantFrom('eu-west-1', ''), detail: fc.record({ 'action-type': text, result: fc.constantFrom('SUCCESS', 'FAILURE'), 'repository-name': text, 'image-tag': text, 'image-digest': text }) }),
  fc.record({ action: fc.constantFrom('published', 'updated'), registry_package: fc.record({ name: text, package_type: fc.constantFrom('CONTAINER', 'npm'), owner: fc.record({ login: text }), package_version: fc.record({ container_metadata: fc.record({ tag: fc.record({ name: text, digest: text }) }) }) }) }),
  fc.record({ message: fc.record({ data: fc.oneof(fc.string(), text.map((t) => Buffer.from(JSON.stringify({ action: 'INSERT', tag: `europe-docker.pkg.dev/p/r/${t}:${t}` })).toString('base64'))) }) }),
  fc.record({ image: text }),
  fc.record({ repository: text, tag: text, digest: text }),
);

describe('robustness', () => {
  it.each(all)('%s answers any JSON value without throwing', (_name, normalize) => {
    fc.assert(fc.property(fc.jsonValue(), (payload) => wellFormed(normalize(payload, ctx))), { numRuns: 300 });
  });

  it.each(all)('%s answers sender-shaped payloads with odd field values, and its events are schema-valid', (_name, normalize) => {
    fc.assert(fc.property(shaped, (payload) => wellFormed(normalize(payload, ctx))), { numRuns: 400 });
  });
});
