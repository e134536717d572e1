import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  registries,
  type ImagePublished,
  type NormalizeContext,
  type NormalizeResult,
  type RegistrySource,
  type Source,
} from '../../src/events/index.js';

/**
 * The real payloads of every registry of the table (src/events/registries/index.ts), one folder
 * each: `test/fixtures/registry/<source>/` holds the payloads, a README saying where each comes
 * from, and `cases.ts`, which says what each payload normalizes to and which ones the fuzzers
 * send. The fixture, route and fuzz tests load them by iterating the table, so a registry
 * without its folder fails them instead of being left out.
 */

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'registry');

/** The request facts every fixture is normalized with. */
export const ctx: NormalizeContext = { deliveryId: 'delivery-1', receivedAt: '2026-01-02T03:04:05.000Z' };

/** One payload file and what the registry's normalizer makes of it with {@link ctx}. */
export interface FixtureCase {
  file: string;
  expected: NormalizeResult;
  /** The content type its sender sends it with, when not {@link RegistryFixtures.fuzz}'s. */
  contentType?: string;
}

/** The default export of `test/fixtures/registry/<source>/cases.ts`. */
export interface RegistryFixtures {
  /** Every payload file of the folder (test/events/fixtures.test.ts checks that none is missing). */
  cases: FixtureCase[];
  /**
   * What the HTTP fuzzers (test/fuzz/) build their requests from: payload files, the first of
   * which the route accepts with valid credentials, and the content type they are sent with.
   */
  fuzz: { files: string[]; contentType: string };
}

/** The event a fixture announces, as normalized with {@link ctx}. */
export function image(source: Source, repository: string, tag: string, digest?: string): ImagePublished {
  const registry = repository.slice(0, repository.indexOf('/'));
  return {
    registry,
    repository,
    tag,
    ...(digest ? { digest } : {}),
    source,
    deliveryId: ctx.deliveryId,
    receivedAt: ctx.receivedAt,
  };
}

/** A result announcing `events`. */
export function images(...events: ImagePublished[]): NormalizeResult {
  return { kind: 'images', events };
}

/** A fixture file's bytes: `<source>/<file>`. */
export function fixtureBytes(path: string): Buffer {
  return readFileSync(join(FIXTURES, path));
}

/** A fixture file parsed as JSON: `<source>/<file>`. */
export function fixtureJson(path: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, path), 'utf8'));
}

/**
 * Every registry of the table with its fixture folder's `cases.ts`, in table order. A registry
 * without one is an error that names the file to write.
 */
export async function loadRegistryFixtures(): Promise<
  Array<{ source: RegistrySource; registry: (typeof registries)[number]; fixtures: RegistryFixtures }>
> {
  return Promise.all(
    registries.map(async (registry) => {
      const path = join(FIXTURES, registry.source, 'cases.ts');
      let fixtures: RegistryFixtures;
      try {
        fixtures = ((await import(path)) as { default: RegistryFixtures }).default;
      } catch (error) {
        throw new Error(
          `the registry "${registry.source}" of src/events/registries/index.ts has no fixtures: write ${path} (see test/support/registry-fixtures.ts): ${(error as Error).message}`,
          { cause: error },
        );
      }
      return { source: registry.source, registry, fixtures };
    }),
  );
}
