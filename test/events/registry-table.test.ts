import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCS_FILE, renderRegistryTable, TABLE_BEGIN, TABLE_END } from '../../scripts/generate-registry-docs.js';
import { registries } from '../../src/events/index.js';

/**
 * The registry table (src/events/registries/index.ts) is what the routes, the tests, the fuzzers
 * and the docs iterate; these are the rules each entry must keep for that to work.
 */
describe('the registry table', () => {
  it('names each registry once, as the route can match it (lowercase letters, not the CI API)', () => {
    const sources = registries.map((registry) => registry.source);
    expect(new Set(sources).size).toBe(sources.length);
    for (const source of sources) expect(source).toMatch(/^[a-z]+$/);
    expect(sources).not.toContain('ci');
  });

  it('gives every registry at least one content type', () => {
    for (const registry of registries) expect(registry.contentTypes.length, registry.source).toBeGreaterThan(0);
  });

  describe('docs/registries.md', () => {
    const docs = readFileSync(DOCS_FILE, 'utf8');

    it('has the summary table generated from the registry table', () => {
      const committed = docs.slice(docs.indexOf(TABLE_BEGIN), docs.indexOf(TABLE_END) + TABLE_END.length);
      expect(committed, 'the registry table in docs/registries.md is stale: run npm run schema').toBe(
        renderRegistryTable(),
      );
    });

    it('has a section for every registry, headed as its descriptor says', () => {
      const headings = docs
        .split('\n')
        .filter((line) => line.startsWith('## '))
        .map((line) => line.slice(3));
      for (const registry of registries)
        expect(headings, `${registry.source}: docs.section`).toContain(registry.docs.section);
    });
  });
});
