import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { EVENT, NEW_DIGEST, OLD_DIGEST, TAG_ONLY, expectEdit, expectRefusal, lines } from './helpers.js';

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

describe('flux setter markers as edit sites', () => {
  const resource = (tag: string, digest: string) =>
    lines(
      'apiVersion: example.com/v1',
      'kind: Podinfo',
      'spec:',
      '  imageRepo: ghcr.io/example/hello # {"$imagepolicy": "flux-system:hello:name"}',
      `  imageTag: ${tag} # {"$imagepolicy": "flux-system:hello:tag"}`,
      `  newDigest: ${digest} # {"$imagepolicy": "flux-system:hello:digest"}`,
      '  other:',
      '    image: ghcr.io/example/hello:0.1 # not a container: no reader looks here, no marker',
    );

  it('edits :tag and :digest fields no reader sees, by the image of the :name field of their policy', () => {
    const result = expectEdit(resource('1.2.3', OLD_DIGEST), resource('1.4.0', NEW_DIGEST), { path: 'podinfo.yaml' });
    expect(result.changed.map((change) => change.path)).toEqual(['spec.imageTag', 'spec.newDigest']);
  });

  it('edits a full-image marker on a field no reader sees, and leaves other policies alone', () => {
    const text = (a: string) =>
      lines(
        'apiVersion: example.com/v1',
        'kind: Podinfo',
        'spec:',
        `  target: ghcr.io/example/hello:${a} # {"$imagepolicy": "flux-system:hello"}`,
        '  other: ghcr.io/example/hello:1.0.0',
      );
    expectEdit(text('1.0.0'), text('1.4.0'), { path: 'podinfo.yaml', event: TAG_ONLY });
  });

  it('leaves a :tag field alone when its policy has no :name field to say which image it is', () => {
    const text = lines(
      'apiVersion: example.com/v1',
      'kind: Podinfo',
      'spec:',
      '  imageTag: 1.2.3 # {"$imagepolicy": "flux-system:hello:tag"}',
      '  repo: ghcr.io/example/hello',
    );
    expect(editImages(text, TAG_ONLY, { path: 'podinfo.yaml' })).toMatchObject({ text, mentions: false, changed: [] });
  });
});

describe('flux policies from the configuration (images[].fluxPolicies)', () => {
  const policies = { 'flux-system:hello': 'ghcr.io/example/hello', 'flux-system:world': 'ghcr.io/example/world' };
  const edit = (text: string, path = 'values.yaml', event = EVENT) =>
    editImages(text, event, { path, fluxPolicies: policies });

  it('renames a :name-marked Helm repository of a policy that sets the event image, and writes its :tag field', () => {
    const text = lines('image:', `  repository: docker.io/example/hello ${NAME_MARKER}`, `  tag: 1.2.3 ${TAG_MARKER}`);
    const result = edit(text, 'values.yaml', TAG_ONLY);
    expect(result.refused).toEqual([]);
    expect(result.text).toBe(
      text.replace('docker.io/example/hello', 'ghcr.io/example/hello').replace('1.2.3', '1.4.0'),
    );
    expect(result.changed.map((change) => change.path)).toEqual(['image.repository', 'image.tag']);
  });

  it('leaves a field whose policy sets another image, although its text names the event image', () => {
    const text = lines(
      'image:',
      '  repository: ghcr.io/example/hello',
      '  tag: 1.2.3 # {"$imagepolicy": "flux-system:world:tag"}',
    );
    const result = edit(text, 'values.yaml', TAG_ONLY);
    expect(result).toMatchObject({ text, changed: [], refused: [], left: [] });
  });

  it('writes only the tag of a :tag marker without a :name field, as Flux does', () => {
    const text = lines('apiVersion: example.com/v1', 'kind: App', 'spec:', `  imageTag: 1.2.3 ${TAG_MARKER}`);
    const result = edit(text, 'app.yaml', TAG_ONLY);
    expect(result.refused).toEqual([]);
    expect(result.text).toBe(text.replace('1.2.3', '1.4.0'));
  });

  it('refuses a :digest-only field when the event carries no digest', () => {
    const text = lines(
      'apiVersion: example.com/v1',
      'kind: App',
      'spec:',
      `  newDigest: ${OLD_DIGEST} ${DIGEST_MARKER}`,
    );
    const result = edit(text, 'app.yaml', TAG_ONLY);
    expect(result.text).toBe(text);
    expect(result.refused.map((refusal) => refusal.reason).join('\n')).toMatch(
      /pins a digest but the event carries none/,
    );
  });

  it('without configured policies, a marked field is the image it names (no rename)', () => {
    const text = lines('image:', `  repository: docker.io/example/hello ${NAME_MARKER}`, `  tag: 1.2.3 ${TAG_MARKER}`);
    expect(editImages(text, TAG_ONLY, { path: 'values.yaml' })).toMatchObject({ text, mentions: false, changed: [] });
  });
});
