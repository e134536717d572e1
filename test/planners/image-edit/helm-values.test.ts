import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { EVENT, NEW_DIGEST, OLD_DIGEST, TAG_ONLY, expectEdit, expectRefusal, lines } from './helpers.js';

const VALUES = { path: 'charts/hello/values.yaml' };

describe('helm values', () => {
  describe('image maps', () => {
    it('edits tag next to a matching repository', () => {
      const result = expectEdit(
        lines(
          'replicaCount: 1',
          'image:',
          '  repository: ghcr.io/example/hello',
          '  pullPolicy: IfNotPresent',
          '  tag: 1.2.3',
        ),
        lines(
          'replicaCount: 1',
          'image:',
          '  repository: ghcr.io/example/hello',
          '  pullPolicy: IfNotPresent',
          '  tag: 1.4.0',
        ),
        VALUES,
      );
      expect(result.kind).toBe('helm-values');
      expect(result.changed).toEqual([{ path: 'image.tag', line: 5, from: '1.2.3', to: '1.4.0' }]);
    });

    it('edits `version` when the map has no tag', () => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', '  version: 1.2.3'),
        lines('image:', '  repository: ghcr.io/example/hello', '  version: 1.4.0'),
        VALUES,
      );
    });

    it('composes Bitnami registry + repository and leaves an empty digest alone', () => {
      expectEdit(
        lines('image:', '  registry: ghcr.io', '  repository: example/hello', '  tag: 1.2.3', '  digest: ""'),
        lines('image:', '  registry: ghcr.io', '  repository: example/hello', '  tag: 1.4.0', '  digest: ""'),
        VALUES,
      );
    });

    it('with pinDigest fills the empty Bitnami digest, keeping its quotes', () => {
      expectEdit(
        lines('image:', '  registry: ghcr.io', '  repository: example/hello', '  tag: 1.2.3', '  digest: ""'),
        lines(
          'image:',
          '  registry: ghcr.io',
          '  repository: example/hello',
          '  tag: 1.4.0',
          `  digest: "${NEW_DIGEST}"`,
        ),
        { ...VALUES, pinDigest: true },
      );
    });

    it('replaces a pinned digest key', () => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: 1.2.3', `  digest: ${OLD_DIGEST}`),
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: 1.4.0', `  digest: ${NEW_DIGEST}`),
        VALUES,
      );
    });

    it('rewrites `tag: x@sha256:…` as one scalar', () => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', `  tag: "1.2.3@${OLD_DIGEST}"`),
        lines('image:', '  repository: ghcr.io/example/hello', `  tag: "1.4.0@${NEW_DIGEST}"`),
        VALUES,
      );
    });

    it('with pinDigest and no digest key writes tag@digest into the tag', () => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: 1.2.3'),
        lines('image:', '  repository: ghcr.io/example/hello', `  tag: 1.4.0@${NEW_DIGEST}`),
        { ...VALUES, pinDigest: true },
      );
    });

    it('finds nested components and lists, and edits only the matching ones', () => {
      const result = expectEdit(
        lines(
          'web:',
          '  image: {repository: ghcr.io/example/hello-web, tag: 1.0.0}',
          'worker:',
          '  image:',
          '    tag: 1.0.0 # tag before repository',
          '    repository: ghcr.io/example/hello',
          'jobs:',
          '  - name: migrate',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: "1.0.0"',
        ),
        lines(
          'web:',
          '  image: {repository: ghcr.io/example/hello-web, tag: 1.0.0}',
          'worker:',
          '  image:',
          '    tag: 1.4.0 # tag before repository',
          '    repository: ghcr.io/example/hello',
          'jobs:',
          '  - name: migrate',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: "1.4.0"',
        ),
        VALUES,
      );
      expect(result.changed.map((c) => c.path)).toEqual(['worker.image.tag', 'jobs[0].image.tag']);
    });

    it('matches a Docker Hub short repository normalized', () => {
      expectEdit(
        lines('image:', '  repository: nginx', '  tag: 1.25.3'),
        lines('image:', '  repository: nginx', '  tag: 1.27.1'),
        { ...VALUES, event: { repository: 'docker.io/library/nginx', tag: '1.27.1' } },
      );
    });

    it('keeps an unaliased anchor on the image map', () => {
      expectEdit(
        lines('image: &img', '  repository: ghcr.io/example/hello', '  tag: 1.0.0'),
        lines('image: &img', '  repository: ghcr.io/example/hello', '  tag: 1.4.0'),
        VALUES,
      );
    });
  });

  describe('when the tag is empty (the chart renders its appVersion): issue 32, cause 1', () => {
    it.each([
      ['tag: ""', 'tag: "1.4.0"'],
      ["tag: ''", "tag: '1.4.0'"],
      ['tag:', 'tag: 1.4.0'],
      ['tag: ~', 'tag: 1.4.0'],
    ])('writes the version into `%s`, since the render does not run it yet', (tagLine, written) => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', `  ${tagLine}`),
        lines('image:', '  repository: ghcr.io/example/hello', `  ${written}`),
        VALUES,
      );
    });

    it('refuses a map without any tag key with its line: the chart supplies the version', () => {
      const result = expectRefusal(
        lines('image:', '  repository: ghcr.io/example/hello', '  pullPolicy: Always'),
        /with no tag key, so the chart supplies the version/,
        { ...VALUES, pinDigest: true },
      );
      expect(result.refused[0]?.line).toBe(2);
    });

    it("edits the version inside `repository` when the map has no tag (Keel's layout)", () => {
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello:1.2.3', '  pullPolicy: IfNotPresent'),
        lines('image:', '  repository: ghcr.io/example/hello:1.4.0', '  pullPolicy: IfNotPresent'),
        VALUES,
      );
      expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello:1.2.3', '  tag: ""'),
        lines('image:', '  repository: ghcr.io/example/hello:1.4.0', '  tag: ""'),
        VALUES,
      );
    });

    it('refuses a repository carrying a version beside a tag that sets another', () => {
      expectRefusal(
        lines('image:', '  repository: ghcr.io/example/hello:1.2.3', '  tag: 1.2.4'),
        /carries a version and image\.tag sets 1\.2\.4 too/,
        VALUES,
      );
    });
  });

  describe('image strings', () => {
    it('edits `image:` and `*Image:` strings, leaving other images alone', () => {
      const result = expectEdit(
        lines(
          'image: ghcr.io/example/hello:1.2.3',
          'sidecarImage: "ghcr.io/example/hello:1.2.3"',
          'proxyImage: envoyproxy/envoy:v1.30.1',
          'imageName: ghcr.io/example/hello:1.2.3',
        ),
        lines(
          'image: ghcr.io/example/hello:1.4.0',
          'sidecarImage: "ghcr.io/example/hello:1.4.0"',
          'proxyImage: envoyproxy/envoy:v1.30.1',
          'imageName: ghcr.io/example/hello:1.2.3',
        ),
        VALUES,
      );
      expect(result.changed.map((c) => c.path)).toEqual(['image', 'sidecarImage']);
    });

    it('replaces tag and digest of a pinned string; pinDigest appends one to an unpinned string', () => {
      expectEdit(
        lines(`image: ghcr.io/example/hello:1.2.3@${OLD_DIGEST}`),
        lines(`image: ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`),
        VALUES,
      );
      expectEdit(
        lines('image: ghcr.io/example/hello:1.2.3'),
        lines(`image: ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`),
        { ...VALUES, pinDigest: true },
      );
    });

    it('keeps a digest-only reference digest-only', () => {
      expectEdit(
        lines(`image: ghcr.io/example/hello@${OLD_DIGEST}`),
        lines(`image: ghcr.io/example/hello@${NEW_DIGEST}`),
        VALUES,
      );
    });

    it('refuses an untagged image string with its line: the chart supplies the tag (issue 32, cause 1)', () => {
      const result = expectRefusal(
        lines('x: 1', 'image: ghcr.io/example/hello'),
        /so the chart supplies the version/,
        VALUES,
      );
      expect(result.refused[0]?.line).toBe(2);
    });

    it('edits the sibling tag of an untagged image string (`image` + `tag`, `fooImage` + `fooImageTag`)', () => {
      const result = expectEdit(
        lines(
          'image: ghcr.io/example/hello # {"$imagepolicy": "flux-system:hello:name"}',
          'tag: 1.2.3 # {"$imagepolicy": "flux-system:hello:tag"}',
          'proxyImage: ghcr.io/example/hello',
          'proxyImageTag: "1.2.3"',
          `proxyImageDigest: ${OLD_DIGEST}`,
        ),
        lines(
          'image: ghcr.io/example/hello # {"$imagepolicy": "flux-system:hello:name"}',
          'tag: 1.4.0 # {"$imagepolicy": "flux-system:hello:tag"}',
          'proxyImage: ghcr.io/example/hello',
          'proxyImageTag: "1.4.0"',
          `proxyImageDigest: ${NEW_DIGEST}`,
        ),
        VALUES,
      );
      expect(result.changed.map((c) => c.path)).toEqual(['tag', 'proxyImageTag', 'proxyImageDigest']);
    });

    it('reads the values of a Flux HelmRelease', () => {
      const result = expectEdit(
        lines(
          'apiVersion: helm.toolkit.fluxcd.io/v2',
          'kind: HelmRelease',
          'spec:',
          '  chart: {spec: {chart: hello, version: 1.0.0}}',
          '  values:',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: 1.2.3',
        ),
        lines(
          'apiVersion: helm.toolkit.fluxcd.io/v2',
          'kind: HelmRelease',
          'spec:',
          '  chart: {spec: {chart: hello, version: 1.0.0}}',
          '  values:',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: 1.4.0',
        ),
        { path: 'apps/hello/release.yaml' },
      );
      expect(result.kind).toBe('manifest');
      expect(result.changed[0]?.path).toBe('spec.values.image.tag');
    });

    it('also reads docker-compose style files (any YAML that is not a manifest)', () => {
      const result = expectEdit(
        lines('services:', '  web:', '    image: ghcr.io/example/hello:1.2.3', '    ports: ["8080:8080"]'),
        lines('services:', '  web:', '    image: ghcr.io/example/hello:1.4.0', '    ports: ["8080:8080"]'),
        { path: 'compose.yaml' },
      );
      expect(result.kind).toBe('helm-values');
    });
  });

  describe('refusals', () => {
    it('refuses a digest in the tag field', () => {
      expectRefusal(
        lines('image:', '  repository: ghcr.io/example/hello', `  tag: ${OLD_DIGEST}`),
        /holds a digest/,
        VALUES,
      );
    });

    it('refuses a pinned map when the event has no digest', () => {
      expectRefusal(
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: 1.2.3', `  digest: ${OLD_DIGEST}`),
        /pins a digest but the event carries none/,
        { ...VALUES, event: TAG_ONLY },
      );
    });

    it('refuses a templated tag', () => {
      expectRefusal(
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: "{{ .Values.global.tag }}"'),
        /template placeholder/,
        VALUES,
      );
    });

    it('refuses a tag anchor used by another component', () => {
      expectRefusal(
        lines('a:', '  image:', '    repository: ghcr.io/example/hello', '    tag: &t 1.2.3', 'b:', '  tag: *t'),
        /anchor &t.*alias \*t/,
        VALUES,
      );
    });

    it('edits an anchored image map once when every alias of it is the same image', () => {
      const result = expectEdit(
        lines('a: &img', '  repository: ghcr.io/example/hello', '  tag: 1.2.3', 'b:', '  image: *img', 'c: [*img]'),
        lines('a: &img', '  repository: ghcr.io/example/hello', '  tag: 1.4.0', 'b:', '  image: *img', 'c: [*img]'),
        VALUES,
      );
      expect(result.changed).toEqual([{ path: 'a.tag', line: 3, from: '1.2.3', to: '1.4.0' }]);
      // A merge key is a use that may override the repository: still refused.
      expectRefusal(
        lines(
          'a: &img',
          '  repository: ghcr.io/example/hello',
          '  tag: 1.2.3',
          'b:',
          '  <<: *img',
          '  repository: x/y',
        ),
        /anchor &img/,
        VALUES,
      );
    });

    it("reads a repository inherited through a merge key and edits the map's own tag", () => {
      expectEdit(
        lines(
          'defaults: &d',
          '  repository: ghcr.io/example/hello',
          '  pullPolicy: IfNotPresent',
          'api:',
          '  image:',
          '    <<: *d',
          '    tag: 1.2.3',
        ),
        lines(
          'defaults: &d',
          '  repository: ghcr.io/example/hello',
          '  pullPolicy: IfNotPresent',
          'api:',
          '  image:',
          '    <<: *d',
          '    tag: 1.4.0',
        ),
        VALUES,
      );
    });
  });

  describe('quoting', () => {
    it('rewrites a plain tag Helm reads as a float even when its text is current', () => {
      const result = expectEdit(
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: 1.10'),
        lines('image:', '  repository: ghcr.io/example/hello', '  tag: "1.10"'),
        { ...VALUES, event: { repository: 'ghcr.io/example/hello', tag: '1.10' } },
      );
      expect(result.changed).toEqual([{ path: 'image.tag', line: 3, from: '1.10', to: '1.10' }]);
    });

    it('double-quotes float- and date-like tags written into a plain tag', () => {
      for (const tag of ['1.10', '2024-01-15', '20240115']) {
        const result = editImages(
          lines('image:', '  repository: ghcr.io/example/hello', '  tag: v1'),
          { ...EVENT, tag },
          VALUES,
        );
        expect(result.text).toBe(lines('image:', '  repository: ghcr.io/example/hello', `  tag: "${tag}"`));
      }
    });
  });
});
