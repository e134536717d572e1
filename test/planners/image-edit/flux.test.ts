import { describe, it } from 'vitest';
import { NEW_DIGEST, OLD_DIGEST, expectEdit, expectRefusal, lines } from './helpers.js';

const TAG_MARKER = '# {"$imagepolicy": "flux-system:hello:tag"}';
const NAME_MARKER = '# {"$imagepolicy": "flux-system:hello:name"}';
const DIGEST_MARKER = '# {"$imagepolicy": "flux-system:hello:digest"}';
const FULL_MARKER = '# {"$imagepolicy": "flux-system:hello"}';

describe('flux setter markers', () => {
  it('keeps a :tag marker on newTag byte-identical', () => {
    expectEdit(
      lines(
        'images:',
        '- name: hello',
        `  newName: ghcr.io/example/hello ${NAME_MARKER}`,
        `  newTag: 1.2.3 ${TAG_MARKER}`,
      ),
      lines(
        'images:',
        '- name: hello',
        `  newName: ghcr.io/example/hello ${NAME_MARKER}`,
        `  newTag: 1.4.0 ${TAG_MARKER}`,
      ),
    );
  });

  it('keeps a full-image marker after image: and writes the full reference', () => {
    expectEdit(
      lines(
        'apiVersion: v1',
        'kind: Pod',
        'spec:',
        '  containers:',
        `  - image: ghcr.io/example/hello:1.2.3@${OLD_DIGEST} ${FULL_MARKER}`,
      ),
      lines(
        'apiVersion: v1',
        'kind: Pod',
        'spec:',
        '  containers:',
        `  - image: ghcr.io/example/hello:1.4.0@${NEW_DIGEST} ${FULL_MARKER}`,
      ),
      { path: 'pod.yaml' },
    );
  });

  it('edits a :digest-marked digest key and a :tag-marked tag in Helm values', () => {
    expectEdit(
      lines(
        'image:',
        `  repository: ghcr.io/example/hello ${NAME_MARKER}`,
        `  tag: 1.2.3 ${TAG_MARKER}`,
        `  digest: ${OLD_DIGEST} ${DIGEST_MARKER}`,
      ),
      lines(
        'image:',
        `  repository: ghcr.io/example/hello ${NAME_MARKER}`,
        `  tag: 1.4.0 ${TAG_MARKER}`,
        `  digest: ${NEW_DIGEST} ${DIGEST_MARKER}`,
      ),
      { path: 'values.yaml' },
    );
  });

  it('with pinDigest adds a digest key next to a :tag-marked newTag instead of writing tag@digest', () => {
    expectEdit(
      lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.2.3 ${TAG_MARKER}`),
      lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.4.0 ${TAG_MARKER}`, `  digest: ${NEW_DIGEST}`),
      { pinDigest: true },
    );
  });

  it('refuses to write tag@digest under a :tag marker (Helm pinDigest without a digest key)', () => {
    expectRefusal(
      lines('image:', '  repository: ghcr.io/example/hello', `  tag: 1.2.3 ${TAG_MARKER}`),
      /says it holds only the tag/,
      { path: 'values.yaml', pinDigest: true },
    );
  });

  it('refuses a marker that disagrees with the field it sits on', () => {
    expectRefusal(
      lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.2.3 ${FULL_MARKER}`),
      /Flux marker .* holds the full image reference/,
    );
    expectRefusal(
      lines(
        'apiVersion: v1',
        'kind: Pod',
        'spec:',
        '  containers:',
        `  - image: ghcr.io/example/hello:1.2.3 ${TAG_MARKER}`,
      ),
      /holds only the tag/,
      { path: 'pod.yaml' },
    );
  });
});
