import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCS_FILE, replaceEnvReference } from '../../scripts/generate-env-docs.js';

describe('docs/configuration.md environment reference', () => {
  it('matches src/config/env.schema.ts', () => {
    const docs = readFileSync(DOCS_FILE, 'utf8');
    expect(
      replaceEnvReference(docs),
      'the environment reference in docs/configuration.md is stale: run npm run schema',
    ).toBe(docs);
  });
});
