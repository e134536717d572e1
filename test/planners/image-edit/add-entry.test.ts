import { describe, expect, it } from 'vitest';
import { addImageEntry } from '../../../src/planners/image-edit/index.js';
import { NEW_DIGEST, TAG_ONLY } from './helpers.js';

const add = (text: string, options: { path?: string; pinDigest?: boolean; name?: string } = {}) =>
  addImageEntry(text, options.pinDigest ? { ...TAG_ONLY, digest: NEW_DIGEST } : TAG_ONLY, {
    path: options.path ?? 'kustomization.yaml',
    name: options.name ?? 'ghcr.io/example/hello',
    pinDigest: options.pinDigest ?? false,
  });

describe('addImageEntry (environments[].addImages)', () => {
  it('keeps CRLF line ends and adds the missing final line break first', () => {
    expect(add('resources:\r\n- base').text).toBe(
      'resources:\r\n- base\r\nimages:\r\n- name: ghcr.io/example/hello\r\n  newTag: 1.4.0\r\n',
    );
  });

  it('writes the digest under pinDigest, after newTag', () => {
    expect(add('resources:\n- base\n', { pinDigest: true }).text).toBe(
      `resources:\n- base\nimages:\n- name: ghcr.io/example/hello\n  newTag: 1.4.0\n  digest: ${NEW_DIGEST}\n`,
    );
  });

  it('appends after a block entry whose last key is a nested list, at the list item indentation', () => {
    expect(add('images:\n- name: nginx\n  newTag: "1.0"\nresources:\n- base\n').text).toBe(
      'images:\n- name: nginx\n  newTag: "1.0"\n- name: ghcr.io/example/hello\n  newTag: "1.4.0"\nresources:\n- base\n',
    );
  });

  it.each([
    ['a file that is not a kustomization', 'resources: []\n', { path: 'values.yaml' }, /is not a kustomization/],
    ['several documents', 'resources: []\n---\nresources: []\n', {}, /holds 2 YAML documents/],
    ['images: that is not a list', 'images: nginx\n', {}, /images: is there but is not a list/],
    ['a flow map at the top', '{resources: []}\n', {}, /not written as a block map/],
    ['an entry name that is not an image', 'resources: []\n', { name: 'Not An Image' }, /is not an image name/],
  ])('refuses %s with the reason, leaving the text as it is', (_what, text, options, reason) => {
    const result = add(text, options);
    expect(result.text).toBe(text);
    expect(result.changed).toEqual([]);
    expect(result.refused.map((refusal) => refusal.reason).join('\n')).toMatch(reason);
  });
});
