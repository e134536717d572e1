import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { editImages, listImages } from '../../../src/planners/image-edit/index.js';
import { EVENT, OLD_DIGEST, lines } from './helpers.js';
import { splitDocuments } from '../../../src/planners/text.js';

const SAMPLES: Array<{ path: string; text: string }> = [
  {
    path: 'kustomization.yaml',
    text: lines(
      'images:',
      '- name: ghcr.io/example/hello # app',
      '  newTag: 1.2.3',
      `  digest: ${OLD_DIGEST}`,
      '- {name: hello, newName: ghcr.io/example/hello}',
    ),
  },
  {
    path: 'values.yaml',
    text: lines(
      'image: &i',
      '  repository: ghcr.io/example/hello',
      '  tag: "1.2.3"',
      'sidecarImage: ghcr.io/example/hello:1.2.3',
      'list:',
      '  - image: {repository: ghcr.io/example/hello, tag: v1}',
    ),
  },
  {
    path: 'all.yaml',
    text: lines(
      'apiVersion: v1',
      'kind: Pod',
      'spec:',
      '  containers:',
      '  - image: ghcr.io/example/hello:1.2.3',
      '---',
      'apiVersion: v1',
      'kind: Pod',
      'spec: {containers: [{image: "ghcr.io/example/hello"}]}',
    ),
  },
  {
    path: 'app.yaml',
    text: lines(
      'apiVersion: argoproj.io/v1alpha1',
      'kind: Application',
      'spec:',
      '  source:',
      '    kustomize: {images: [ghcr.io/example/hello:1.2.3]}',
      '    helm:',
      '      parameters:',
      '      - {name: image.repository, value: ghcr.io/example/hello}',
      '      - {name: image.tag, value: "1"}',
    ),
  },
];

const mutation = fc.record({
  at: fc.nat(),
  remove: fc.integer({ min: 0, max: 3 }),
  insert: fc.constantFrom(
    '',
    ' ',
    '\t',
    '\n',
    '\r\n',
    ':',
    '- ',
    '#',
    '"',
    "'",
    '{',
    '}',
    '[',
    ']',
    ',',
    '&a ',
    '*a',
    '<<: ',
    '---\n',
    '%',
    '|',
    '>',
    '?',
    '\uFEFF',
    'ü',
    '${X}',
    '{{',
    '@sha256:',
    'newTag: ',
    'image: ',
  ),
});

function mutate(text: string, edits: Array<{ at: number; remove: number; insert: string }>): string {
  let result = text;
  for (const { at, remove, insert } of edits) {
    const position = at % (result.length + 1);
    result = result.slice(0, position) + insert + result.slice(position + remove);
  }
  return result;
}

describe('robustness', () => {
  it('never throws, and either edits with a re-parseable result or leaves the text untouched (mutated inputs)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SAMPLES),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        ({ path, text }, edits, pinDigest) => {
          const input = mutate(text, edits);
          const result = editImages(input, EVENT, { path, pinDigest });
          if (result.refused.length > 0 || result.changed.length === 0) {
            expect(result.text).toBe(input);
            expect(result.changed).toEqual([]);
          } else {
            // Every document parses, except template documents the editor skipped: said so when
            // they may name the image, silently when they cannot (like files that do not mention it).
            const chunks = splitDocuments(result.text) ?? [{ start: 0, end: result.text.length }];
            for (const chunk of chunks) {
              const chunkText = result.text.slice(chunk.start, chunk.end);
              const docs = parseAllDocuments(chunkText);
              if (Array.isArray(docs) && docs.every((doc) => doc.errors.length === 0)) continue;
              // A document that does not parse is never edited. One that cannot name the image is
              // not even read, like a file that does not mention it (src/planners/image-edit/parse.ts);
              // one that can is a template the editor skipped and said so.
              expect(input).toContain(chunkText.replace(/^---\n/, ''));
              if (!chunkText.includes('hello')) continue;
              expect(chunkText).toContain('{{');
              expect(result.left.some((left) => left.reason.includes('Go/Helm template'))).toBe(true);
            }
            expect(result.unchanged).toBe(false);
          }
          expect(() => listImages(input, { path })).not.toThrow();
        },
      ),
      { numRuns: 600 },
    );
  });

  it('reaches a fixed point: editing its own output again is unchanged', () => {
    for (const { path, text } of SAMPLES) {
      for (const pinDigest of [false, true]) {
        const first = editImages(text, EVENT, { path, pinDigest });
        expect(first.refused).toEqual([]);
        const second = editImages(first.text, EVENT, { path, pinDigest });
        expect(second).toMatchObject({ text: first.text, changed: [], refused: [], unchanged: true });
      }
    }
  });
});
