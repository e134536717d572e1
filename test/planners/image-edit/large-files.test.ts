import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { CHUNKED_PARSE_THRESHOLD } from '../../../src/planners/image-edit/parse.js';
import { EVENT, TAG_ONLY } from './helpers.js';

function pod(index: number, image: string): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: pod-${index} # comment ${index}`,
    'spec:',
    '  containers:',
    `    - image: ${image}`,
    '',
  ].join('\n');
}

/** A stream over the chunked-parse threshold with the image in document `at`. */
function bigStream(at: number, count: number, head = '# generated\n'): string {
  const docs = Array.from({ length: count }, (_, i) =>
    pod(i, i === at ? 'ghcr.io/example/hello:1.2.3' : `ghcr.io/example/other-${i}:1.0.0`),
  );
  return head + docs.map((doc) => `---\n${doc}`).join('');
}

describe('large multi-document files', () => {
  const count = 3900;
  const at = count - 3;
  const text = bigStream(at, count);

  it('are big enough to take the chunked path', () => {
    expect(text.length).toBeGreaterThan(CHUNKED_PARSE_THRESHOLD);
  });

  it('edit only the matching document with the same paths and lines as a whole parse would give', () => {
    const result = editImages(text, EVENT, { path: 'all.yaml' });
    const line = text.slice(0, text.indexOf('ghcr.io/example/hello:1.2.3')).split('\n').length;
    expect(result.refused).toEqual([]);
    expect(result.text).toBe(text.replace('ghcr.io/example/hello:1.2.3', 'ghcr.io/example/hello:1.4.0'));
    expect(result.changed).toEqual([
      {
        path: `[${at}].spec.containers[0].image`,
        line,
        from: 'ghcr.io/example/hello:1.2.3',
        to: 'ghcr.io/example/hello:1.4.0',
      },
    ]);
    expect(result.kind).toBe('manifest');
    // The index is the one parseAllDocuments gives the document.
    const docs = parseAllDocuments(text);
    expect(Array.isArray(docs) && docs[at]?.getIn(['spec', 'containers', 0, 'image'])).toBe(
      'ghcr.io/example/hello:1.2.3',
    );
  });

  it('are unchanged when current and ignored when the image is absent', () => {
    const current = text.replace('ghcr.io/example/hello:1.2.3', 'ghcr.io/example/hello:1.4.0');
    expect(editImages(current, TAG_ONLY, { path: 'all.yaml' })).toMatchObject({
      text: current,
      unchanged: true,
      mentions: true,
      changed: [],
    });
    const absent = editImages(text, { repository: 'ghcr.io/example/absent', tag: '1' }, { path: 'all.yaml' });
    expect(absent).toMatchObject({ text, unchanged: false, mentions: false, changed: [] });
  });

  it('refuse a parse error in a document that mentions the image, at its line in the file', () => {
    const broken = text.replace(
      '    - image: ghcr.io/example/hello:1.2.3',
      '    - image: ghcr.io/example/hello:1.2.3\n  bad: [',
    );
    const result = editImages(broken, EVENT, { path: 'all.yaml' });
    expect(result.text).toBe(broken);
    expect(result.refused[0]?.reason).toMatch(/not valid YAML/);
    const line = broken.slice(0, broken.indexOf('  bad: [')).split('\n').length;
    expect(result.refused[0]?.line).toBeGreaterThanOrEqual(line);
  });

  it('fall back to a whole parse when the stream has directives', () => {
    const withDirective = `%YAML 1.2\n${text}`;
    const result = editImages(withDirective, EVENT, { path: 'all.yaml' });
    expect(result.text).toBe(withDirective.replace('ghcr.io/example/hello:1.2.3', 'ghcr.io/example/hello:1.4.0'));
    expect(result.changed[0]?.path).toBe(`[${at}].spec.containers[0].image`);
  });
});
