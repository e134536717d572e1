import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildRepoConfigSchema,
  DOCS_FILE,
  REFERENCE_BEGIN,
  REFERENCE_END,
  renderReference,
  renderSchemaFile,
  SCHEMA_FILE,
  SCHEMA_SOURCE_FILE,
} from '../../scripts/generate-schema.js';

describe('generated files', () => {
  const { schema, rows } = buildRepoConfigSchema();

  it('schema/escalator.schema.json matches the zod schema', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8'), 'schema/escalator.schema.json is stale: run npm run schema').toBe(
      renderSchemaFile(schema),
    );
  });

  it('the reference in docs/configuration.md matches the zod schema', () => {
    const docs = readFileSync(DOCS_FILE, 'utf8');
    const committed = docs.slice(docs.indexOf(REFERENCE_BEGIN), docs.indexOf(REFERENCE_END) + REFERENCE_END.length);
    expect(committed, 'the reference in docs/configuration.md is stale: run npm run schema').toBe(
      renderReference(rows),
    );
  });

  it('documents every field, with $schema, $id and a title', () => {
    expect(schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: expect.any(String),
      title: 'Escalator repository configuration',
    });
    expect(rows.map((row) => row.key)).toEqual([
      'version',
      'environments',
      'environments[].name',
      'environments[].paths',
      'environments[].from',
      'environments[].autoMerge',
      'environments[].soak',
      'environments[].reviewers',
      'environments[].group',
      'environments[].addImages',
      'environments[].health',
      'environments[].health.argocd',
      'environments[].health.flux',
      'environments[].health.statuses',
      'environments[].health.statuses[].context',
      'environments[].health.statuses[].app',
      'environments[].health.statuses[].user',
      'environments[].health.tolerate',
      'environments[].health.timeout',
      'environments[].health.deployments',
      'environments[].rollback',
      'environments[].windows',
      'environments[].windows.allow',
      'environments[].windows.allow[].cron',
      'environments[].windows.allow[].duration',
      'environments[].windows.allow[].zone',
      'environments[].windows.deny',
      'environments[].windows.deny[].cron',
      'environments[].windows.deny[].duration',
      'environments[].windows.deny[].zone',
      'environments[].verify',
      'environments[].verify.keys',
      'environments[].verify.signers',
      'environments[].verify.signers[].issuer',
      'environments[].verify.signers[].subject',
      'environments[].verify.signers[].subjectPattern',
      'environments[].verify.signers[].repository',
      'environments[].verify.trustedRoot',
      'environments[].verify.provenance',
      'environments[].promote',
      'environments[].promote.config',
      'environments[].promote.include',
      'environments[].promote.exclude',
      'images',
      'images[].name',
      'images[].tags',
      'images[].policy',
      'images[].range',
      'images[].pinDigest',
      'images[].fluxPolicies',
      'images[].helmDottedKeys',
      'dryRun',
      'diff',
      'diff.enabled',
      'diff.forks',
      'diff.paths',
      'labels',
      'dashboard',
    ]);
    expect(rows.every((row) => row.description.length > 0)).toBe(true);
  });

  describe('when the TSDoc and the zod schema disagree', () => {
    const source = readFileSync(SCHEMA_SOURCE_FILE, 'utf8');

    it('refuses a @default that is not the zod default', () => {
      const edited = source.replace('@default "0s"', '@default "1m"');
      expect(edited).not.toBe(source);
      expect(() => buildRepoConfigSchema(edited)).toThrow(
        'EnvironmentConfig.soak: the TSDoc says @default "1m", zod says "0s"',
      );
    });

    it('refuses a field without TSDoc', () => {
      const edited = source.replace(/\/\*\*\n\s+\* Open one pull request for all apps[^/]*\*\/\n/, '');
      expect(edited).not.toBe(source);
      expect(() => buildRepoConfigSchema(edited)).toThrow('EnvironmentConfig.group: write TSDoc for the field');
    });

    it('refuses an optional field without @default', () => {
      const edited = source.replace('     * @default every tag that is not ignored\n', '');
      expect(edited).not.toBe(source);
      expect(() => buildRepoConfigSchema(edited)).toThrow('ImageConfig.tags: optional fields need an @default tag');
    });
  });
});
