import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImagePublished, normalizeCiImage, normalizers } from '../../src/events/index.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from '../../src/events/index.js';
import { fixtureJson, loadRegistryFixtures } from '../support/registry-fixtures.js';

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

const text = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '',
    'v1',
    'latest',
    '-x',
    'sha256:' + 'a'.repeat(64),
    'sha256-' + 'a'.repeat(64) + '.sig',
    'Team/App',
    'team/app',
    'r.example.com:5000',
    'push',
    'PUSH',
    'INSERT',
  ),
);
/** Payloads shaped like each sender's, with every field drawn from odd and ordinary values. */
const shaped = fc.oneof(
  fc.record({ push_data: fc.record({ tag: text }), repository: fc.record({ repo_name: text }) }),
  fc.record({ docker_url: text, updated_tags: fc.array(text) }),
  fc.record({
    action: text,
    target: fc.record({ repository: text, tag: text, digest: text, mediaType: text }),
    request: fc.record({ host: text }),
  }),
  fc.record({
    events: fc.array(
      fc.record({
        action: fc.constantFrom('push', 'pull', 'delete', 'mount'),
        target: fc.record({ repository: text, tag: text, digest: text, mediaType: text, url: text }),
        request: fc.record({ host: text }),
      }),
    ),
  }),
  fc.record({
    type: fc.constantFrom('PUSH_ARTIFACT', 'PULL_ARTIFACT'),
    event_data: fc.record({
      resources: fc.array(fc.record({ tag: text, digest: text, resource_url: text })),
      repository: fc.record({ repo_full_name: text }),
    }),
  }),
  fc.record({
    'detail-type': fc.constant('ECR Image Action'),
    account: fc.constantFrom('123456789012', 'x'),
    region: fc.constantFrom('eu-west-1', ''),
    detail: fc.record({
      'action-type': text,
      result: fc.constantFrom('SUCCESS', 'FAILURE'),
      'repository-name': text,
      'image-tag': text,
      'image-digest': text,
    }),
  }),
  fc.record({
    action: fc.constantFrom('published', 'updated'),
    registry_package: fc.record({
      name: text,
      package_type: fc.constantFrom('CONTAINER', 'npm'),
      owner: fc.record({ login: text }),
      package_version: fc.record({ container_metadata: fc.record({ tag: fc.record({ name: text, digest: text }) }) }),
    }),
  }),
  fc.record({
    message: fc.record({
      data: fc.oneof(
        fc.string(),
        text.map((t) =>
          Buffer.from(JSON.stringify({ action: 'INSERT', tag: `europe-docker.pkg.dev/p/r/${t}:${t}` })).toString(
            'base64',
          ),
        ),
      ),
    }),
  }),
  fc.record({ image: text }),
  fc.record({ repository: text, tag: text, digest: text }),
);

/** Every path to a value inside a JSON document, the document itself included. */
function pathsOf(
  value: unknown,
  path: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  out.push(path);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...path, i], out));
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...path, key], out);
  return out;
}

/** `document` with the value at `path` replaced (a copy). */
function replaced(document: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(document) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
  return copy;
}

/** Each registry of the table with its real payloads (test/fixtures/registry/<source>/). */
const ownPayloads = (await loadRegistryFixtures()).map(
  ({ source, fixtures }) =>
    [source, normalizers[source], fixtures.cases.map((c) => fixtureJson(`${source}/${c.file}`))] as const,
);

describe('robustness', () => {
  it.each(all)('%s answers any JSON value without throwing', (_name, normalize) => {
    fc.assert(
      fc.property(fc.jsonValue(), (payload) => wellFormed(normalize(payload, ctx))),
      { numRuns: 300 },
    );
  });

  it.each(all)(
    '%s answers sender-shaped payloads with odd field values, and its events are schema-valid',
    (_name, normalize) => {
      fc.assert(
        fc.property(shaped, (payload) => wellFormed(normalize(payload, ctx))),
        { numRuns: 400 },
      );
    },
  );

  // Shapes from the registry's own fixtures, so a registry added to the table is fuzzed in its shape without a line here.
  it.each(ownPayloads)(
    '%s answers its real payloads with any one value replaced by an odd one, and its events are schema-valid',
    (_name, normalize, payloads) => {
      const mutated = fc
        .tuple(fc.constantFrom(...payloads), fc.nat(), fc.oneof(text, fc.jsonValue({ maxDepth: 2 })))
        .map(([payload, pick, value]) => {
          const paths = pathsOf(payload);
          return replaced(payload, paths[pick % paths.length]!, value);
        });
      fc.assert(
        fc.property(mutated, (payload) => wellFormed(normalize(payload, ctx))),
        { numRuns: 300 },
      );
    },
  );
});
