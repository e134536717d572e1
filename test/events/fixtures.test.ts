import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizers, registrySources } from '../../src/events/index.js';
import {
  ctx,
  FIXTURES,
  fixtureJson as fixture,
  image,
  images,
  loadRegistryFixtures,
} from '../support/registry-fixtures.js';

/**
 * One test per real payload: the vendors' documented examples, @octokit/webhooks-examples, and
 * what Debian's docker-registry 2.8 really sends. Each asserts the exact result, written in the
 * registry's fixture folder (`test/fixtures/registry/<source>/cases.ts`); every registry of the
 * table has one.
 */

const registries = await loadRegistryFixtures();

describe('registry fixtures', () => {
  for (const { source, fixtures } of registries) {
    describe(source, () => {
      it.each(fixtures.cases)('$file', ({ file, expected }) => {
        expect(normalizers[source](fixture(`${source}/${file}`), ctx)).toEqual(expected);
      });
    });
  }

  it('covers every fixture file on disk', () => {
    for (const { source, fixtures } of registries) {
      const onDisk = readdirSync(join(FIXTURES, source)).filter(
        (f) => f.endsWith('.json') && f !== 'debian-2.8-headers.json',
      );
      expect(fixtures.cases.map((c) => c.file).sort()).toEqual(onDisk.sort());
    }
  });

  it('has a folder for every registry of the table, and none for a registry it does not hold', () => {
    const folders = readdirSync(FIXTURES, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual([...registrySources].sort());
  });

  it('the fuzzers send payloads of the folder, the first one accepted', () => {
    for (const { source, fixtures } of registries) {
      const files = fixtures.cases.map((c) => c.file);
      for (const file of fixtures.fuzz.files) expect(files, `${source}: fuzz file ${file}`).toContain(file);
      expect(
        fixtures.cases.find((c) => c.file === fixtures.fuzz.files[0])?.expected.kind,
        `${source}: the first fuzz file`,
      ).toBe('images');
    }
  });

  it('the Debian registry delivers with the v1 envelope media type', () => {
    expect(fixture('distribution/debian-2.8-headers.json')).toMatchObject({
      method: 'POST',
      'content-type': 'application/vnd.docker.distribution.events.v1+json',
    });
  });
});

describe('github fixtures', () => {
  const require = createRequire(import.meta.url);
  const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as {
    name: string;
    examples: unknown[];
  }[];
  const packageExamples = examples.find((e) => e.name === 'package')?.examples ?? [];

  it('@octokit/webhooks-examples has the three package examples this table expects', () => {
    expect(packageExamples).toHaveLength(3);
  });

  it.each([
    { index: 0, expected: { kind: 'ignored', reason: 'not-a-container', detail: 'package.package_type "npm"' } },
    // Its registry is the CONTAINER registry and its container_metadata.tag.name is empty: an untagged manifest.
    {
      index: 1,
      expected: { kind: 'ignored', reason: 'untagged', detail: 'the push carries no tag (pushed by digest)' },
    },
    { index: 2, expected: { kind: 'ignored', reason: 'not-a-container', detail: 'package.package_type "npm"' } },
  ])('@octokit/webhooks-examples package example $index', ({ index, expected }) => {
    expect(normalizers.github(packageExamples[index], ctx)).toEqual(expected);
  });

  const multiarch = fixture('github/package-published-multiarch.json') as Record<string, unknown>;
  const expected = images(
    image(
      'github',
      'ghcr.io/theryangeary/www',
      '0e2a89b',
      'sha256:89160c587d0c36bf54090497a465445c14980ba48efbcf3b0d03c49b76f3feb8',
    ),
  );

  it('package-published-multiarch.json (the tagged index of a two-platform image)', () => {
    expect(normalizers.github(multiarch, ctx)).toEqual(expected);
  });

  it('package-published-multiarch.json delivered as registry_package, as a GitHub App receives it', () => {
    const { package: pkg, ...rest } = multiarch;
    expect(normalizers.github({ ...rest, registry_package: pkg }, ctx)).toEqual(expected);
  });
});
