import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatProblems, parseRepoConfig } from '../../src/config/repo-config.js';
import { RepoConfig } from '../../src/config/repo-config.schema.js';
import { DOCS_FILE, SCHEMA_FILE } from '../../scripts/generate-schema.js';

type Schema = Record<string, unknown> & { properties: Record<string, Schema>; items: Schema };

const jsonSchema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Schema;
const ajv = new Ajv({ strict: true, allErrors: true });
const validate = ajv.compile(jsonSchema);

/** The committed schema's rule for one string field, compiled on its own. */
function fieldValidator(schema: Schema): (value: string) => boolean {
  const check: ValidateFunction = ajv.compile({ ...schema, $schema: undefined });
  return (value) => check(value) as boolean;
}
const environment = jsonSchema.properties.environments!.items;
const image = jsonSchema.properties.images!.items;

/** The repository-config section of docs/configuration.md, split around its "Checking the file" part. */
function docsSection() {
  const docs = readFileSync(DOCS_FILE, 'utf8');
  const start = docs.indexOf('## Repository configuration: .github/escalator.yml');
  const next = docs.indexOf('\n## ', start + 1);
  const section = docs.slice(start, next < 0 ? undefined : next);
  const blocks = (text: string, lang: string) =>
    [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');
  const checking = section.indexOf('### Checking the file');
  return {
    examples: blocks(section.slice(0, checking), 'yaml'),
    broken: blocks(section.slice(checking), 'yaml'),
    output: blocks(section.slice(checking), 'text'),
  };
}

describe('schema/escalator.schema.json', () => {
  it('compiles as strict draft-07', () => {
    expect(jsonSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(validate).toBeTypeOf('function');
  });

  describe('the examples in docs/configuration.md', () => {
    const { examples, broken, output } = docsSection();

    it('are there', () => {
      expect(examples.length).toBeGreaterThanOrEqual(2);
      expect(broken).toHaveLength(1);
      expect(output).toHaveLength(1);
    });

    it.each(examples.map((example, index) => [index, example] as const))(
      'example %i is accepted by editors and by Escalator',
      (_index, example) => {
        expect(validate(parse(example)), JSON.stringify(validate.errors)).toBe(true);
        expect(parseRepoConfig(example)).toMatchObject({ ok: true });
      },
    );

    it('the broken example gets exactly the problems shown', () => {
      const result = parseRepoConfig(broken[0] ?? '');
      expect(formatProblems(result.ok ? [] : result.problems)).toBe((output[0] ?? '').trimEnd());
    });
  });

  describe('agrees with the zod schema', () => {
    const base = { environments: [{ name: 'dev', paths: ['apps/*/dev'], from: 'registry' }] };
    const images = (entry: Record<string, unknown>) => ({
      ...base,
      images: [{ name: 'ghcr.io/example/hello', ...entry }],
    });
    const configs: [name: string, config: unknown, valid: boolean][] = [
      ['the minimal config', base, true],
      ['version 1', { version: 1, ...base }, true],
      ['semver-range with a range', images({ policy: 'semver-range', range: '^1.2' }), true],
      [
        'every default written out',
        { ...base, images: [], dryRun: false, diff: { enabled: true, forks: false, paths: [] }, labels: [] },
        true,
      ],
      ['no environments key', {}, false],
      ['an empty environment list', { environments: [] }, false],
      ['an unknown root key', { ...base, colour: 'red' }, false],
      ['an unknown environment key', { environments: [{ ...base.environments[0], automerge: true }] }, false],
      ['an unknown diff key', { ...base, diff: { enable: true } }, false],
      ['a missing from', { environments: [{ name: 'dev', paths: ['a'] }] }, false],
      ['version 2', { version: 2, ...base }, false],
      ['semver-range without a range', images({ policy: 'semver-range' }), false],
      ['a range with policy semver', images({ policy: 'semver', range: '^1.2' }), false],
      ['a range with the default policy', images({ range: '^1.2' }), false],
      ['an unknown policy', images({ policy: 'semvar' }), false],
      ['a quoted boolean', { ...base, dryRun: 'true' }, false],
    ];
    it.each(configs)('%s: valid is %s for both', (_name, config, valid) => {
      expect(validate(config), JSON.stringify(validate.errors)).toBe(valid);
      expect(RepoConfig.safeParse(config).success).toBe(valid);
    });

    /** True when zod accepts `value` in the given place of an otherwise valid config. */
    const zodAccepts = (place: (value: string) => unknown) => (value: string) =>
      RepoConfig.safeParse(place(value)).success;
    const withEnvironment = (fields: Record<string, unknown>) => ({
      environments: [{ name: 'dev', paths: ['x/*'], from: 'registry', ...fields }],
    });
    const fields: [
      name: string,
      editor: (value: string) => boolean,
      zod: (value: string) => boolean,
      samples: string[],
      alphabet: string[],
    ][] = [
      [
        'paths',
        fieldValidator(environment.properties.paths!.items),
        zodAccepts((path) => withEnvironment({ paths: [path] })),
        [
          'apps/*/overlays/dev',
          'apps/**/dev/',
          'a',
          '/a',
          'a/../b',
          './a',
          'a//b',
          'a\\b',
          'a/**b',
          'a/*-*',
          '',
          '*',
          '**',
          '.hidden/x',
          'a/..b',
          'a/.',
        ],
        ['a', '/', '*', '.', '\\', '-'],
      ],
      [
        'soak',
        fieldValidator(environment.properties.soak!),
        zodAccepts((soak) => withEnvironment({ soak })),
        ['30s', '1h30m', '1d2h3m4s', '0s', '', '30', '1h 30m', '30m1h', '10ms'],
        ['1', '0', 'd', 'h', 'm', 's', ' '],
      ],
      [
        'reviewers',
        fieldValidator(environment.properties.reviewers!.items),
        zodAccepts((reviewer) => withEnvironment({ reviewers: [reviewer] })),
        ['alice', '@alice', '@example/release-managers', 'example/sre', 'a-b', '-a', 'a--b', 'a b', '@example/', ''],
        ['a', '-', '@', '/', '.', ' '],
      ],
      [
        'images[].name',
        fieldValidator(image.properties.name!),
        zodAccepts((name) => ({ ...base, images: [{ name }] })),
        [
          'nginx',
          'ghcr.io/example/hello',
          'localhost:5000/a',
          'Example.com/a',
          'a/B',
          'a:1',
          'a@sha256:0',
          'a__b',
          'a___b',
          'a--b',
          '',
        ],
        ['a', 'B', '.', '_', '-', ':', '/', '1', '@'],
      ],
      [
        'labels',
        fieldValidator(jsonSchema.properties.labels!.items),
        zodAccepts((label) => ({ ...base, labels: [label] })),
        ['escalator', 'area: deploy', '', ' ', 'x'.repeat(50), 'x'.repeat(51), '🚀'.repeat(50)],
        ['a', ' ', '🚀', '\t'],
      ],
    ];

    describe.each(fields)('%s', (_name, editor, zod, samples, alphabet) => {
      it.each(samples)('%j', (sample) => {
        expect(editor(sample)).toBe(zod(sample));
      });

      it('for any string of its characters', () => {
        const strings = fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }).map((chars) => chars.join(''));
        fc.assert(
          fc.property(strings, (value) => editor(value) === zod(value)),
          { numRuns: 300 },
        );
      });
    });

    it('environment names, except "registry", which only Escalator refuses', () => {
      const editor = fieldValidator(environment.properties.name!);
      const zod = zodAccepts((name) => ({ environments: [{ name, paths: ['x/*'], from: 'registry' }] }));
      for (const name of ['dev', 'prod-eu_1', 'Dev', '-dev', 'my env', '', 'x'.repeat(63), 'x'.repeat(64)]) {
        expect(editor(name), name).toBe(zod(name));
      }
      expect([editor('registry'), zod('registry')]).toEqual([true, false]);
    });
  });
});
