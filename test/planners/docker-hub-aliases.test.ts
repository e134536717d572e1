import { describe, expect, it } from 'vitest';
import {
  normalizeCiImage,
  normalizeDistribution,
  normalizeDockerhub,
  type NormalizeResult,
} from '../../src/events/index.js';
import { planBump } from '../../src/planners/bump-plan.js';
import { editImages, listImages } from '../../src/planners/image-edit/index.js';
import { DOCKER_HUB_ALIASES, normalizeName, sameRepository } from '../../src/planners/image-ref.js';

/**
 * One grammar for Docker Hub (issue 14 §3): an event from each spelling of a Docker Hub
 * repository bumps a manifest written with each other spelling, through the real path — the
 * event normalizer, the index lookup (`normalizeName` of the event against what `listImages`
 * reads), the tag policy's `sameRepository`, the editor's bytes and the bump plan.
 */

const ctx = { deliveryId: 'd-1', receivedAt: '2024-05-01T12:00:00.000Z' };

/** The repository of the one image a normalizer produced. */
function repositoryOf(result: NormalizeResult): string {
  if (result.kind !== 'images' || result.events.length !== 1)
    throw new Error(`expected one image, got ${JSON.stringify(result)}`);
  return result.events[0]!.repository;
}

/** How a registry or a pipeline announces a push of `path` on Docker Hub through `host` (or none). */
const senders: Array<{ name: string; announce: (host: string | undefined, path: string) => string }> = [
  {
    name: 'CI API',
    announce: (host, path) => repositoryOf(normalizeCiImage({ image: `${host ? `${host}/` : ''}${path}:2.0.0` }, ctx)),
  },
  {
    name: 'Distribution notification',
    announce: (host, path) =>
      repositoryOf(
        normalizeDistribution(
          {
            events: [
              {
                action: 'push',
                target: {
                  mediaType: 'application/vnd.oci.image.index.v1+json',
                  repository: path,
                  tag: '2.0.0',
                  digest: `sha256:${'c'.repeat(64)}`,
                },
                request: { host: host ?? 'docker.io' },
              },
            ],
          },
          ctx,
        ),
      ),
  },
];

/**
 * Every way to write the registry of a Docker Hub repository; `undefined` leaves it implicit.
 * Written out rather than read from DOCKER_HUB_ALIASES, so dropping an alias fails its rows.
 */
const hosts: Array<string | undefined> = [undefined, 'docker.io', 'index.docker.io', 'registry-1.docker.io'];

/** A user repository and an official image, each with and without its implicit `library/`. */
const repositories = [
  { canonical: 'docker.io/example/app', paths: ['example/app'] },
  { canonical: 'docker.io/library/nginx', paths: ['nginx', 'library/nginx'] },
];

const spellings = (paths: readonly string[]): string[] =>
  hosts.flatMap((host) => paths.map((path) => (host ? `${host}/${path}` : path)));

/** A manifest and a kustomization that pin `spelling` at 1.0.0, and what they read after the bump. */
function files(spelling: string): Array<{ path: string; before: string; after: string }> {
  const deployment = (tag: string) =>
    [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: app',
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '        - name: app',
      `          image: ${spelling}:${tag} # pinned`,
      '',
    ].join('\n');
  const kustomization = (tag: string) =>
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'images:',
      `  - name: ${spelling}`,
      `    newTag: "${tag}"`,
      '',
    ].join('\n');
  return [
    { path: 'apps/app/overlays/dev/deployment.yaml', before: deployment('1.0.0'), after: deployment('2.0.0') },
    { path: 'apps/app/overlays/dev/kustomization.yaml', before: kustomization('1.0.0'), after: kustomization('2.0.0') },
  ];
}

describe('Docker Hub aliases', () => {
  it('are index.docker.io and registry-1.docker.io', () => {
    expect(DOCKER_HUB_ALIASES).toEqual(['index.docker.io', 'registry-1.docker.io']);
  });

  it("sameRepository('registry-1.docker.io/foo/bar', 'docker.io/foo/bar') is true", () => {
    expect(sameRepository('registry-1.docker.io/foo/bar', 'docker.io/foo/bar')).toBe(true);
  });

  for (const { canonical, paths } of repositories) {
    const rows = senders.flatMap((sender) =>
      hosts.flatMap((host) =>
        paths.flatMap((path) =>
          spellings(paths).map((written) => ({ sender: sender.name, announce: sender.announce, host, path, written })),
        ),
      ),
    );

    describe(`${canonical}: an event from each spelling bumps a manifest written with each other spelling`, () => {
      it.each(rows)('$sender from $host/$path bumps $written', ({ announce, host, path, written }) => {
        const repository = announce(host, path);
        expect(repository).toBe(canonical);

        for (const file of files(written)) {
          // The index: the image job looks the event's normalized name up among the names read from files.
          const uses = listImages(file.before, { path: file.path }).uses;
          expect(uses.map((use) => use.name)).toContain(normalizeName(repository));
          // The tag policy and the bump plan: the same repository.
          expect(uses.every((use) => sameRepository(use.name, repository))).toBe(true);
          // The editor: only the tag moves, the file keeps its spelling.
          const edited = editImages(file.before, { repository, tag: '2.0.0' }, { path: file.path });
          expect(edited.refused).toEqual([]);
          expect(edited.text).toBe(file.after);
        }

        const plan = planBump({
          environment: 'dev',
          app: 'app',
          files: files(written).map(({ path, before }) => ({ path, text: before })),
          images: [{ image: { repository, tag: '2.0.0' }, policy: { policy: 'newest', pinDigest: false } }],
        });
        expect(plan.refused).toEqual([]);
        expect(plan.updates).toEqual(files(written).map(({ path, after }) => ({ path, content: after })));
      });
    });
  }

  describe('what is not Docker Hub', () => {
    it.each([
      ['registry.hub.docker.com/example/app', 'neither distribution/reference nor Docker Engine folds it'],
      ['ghcr.io/example/app', 'another registry'],
      ['docker.io/other/app', 'another namespace'],
      ['Docker.io/example/app', 'a domain is compared as written, as distribution/reference does'],
    ])('%s is not docker.io/example/app (%s)', (written) => {
      for (const file of files(written)) {
        expect(listImages(file.before, { path: file.path }).uses.map((use) => use.name)).not.toContain(
          'docker.io/example/app',
        );
        const edited = editImages(
          file.before,
          { repository: 'docker.io/example/app', tag: '2.0.0' },
          { path: file.path },
        );
        expect(edited.text).toBe(file.before);
        expect(edited.changed).toEqual([]);
      }
    });

    it('an event from registry.hub.docker.com names that host', () => {
      expect(repositoryOf(normalizeCiImage({ image: 'registry.hub.docker.com/example/app:2.0.0' }, ctx))).toBe(
        'registry.hub.docker.com/example/app',
      );
    });
  });

  it('a Docker Hub webhook (repo_name only) is docker.io, with library/ for official images', () => {
    expect(
      repositoryOf(normalizeDockerhub({ push_data: { tag: '2.0.0' }, repository: { repo_name: 'example/app' } }, ctx)),
    ).toBe('docker.io/example/app');
    expect(
      repositoryOf(normalizeDockerhub({ push_data: { tag: '2.0.0' }, repository: { repo_name: 'nginx' } }, ctx)),
    ).toBe('docker.io/library/nginx');
  });

  it('registry hosts in payloads are compared without regard to case', () => {
    const repository = repositoryOf(
      normalizeDistribution(
        {
          events: [
            {
              action: 'push',
              target: { mediaType: 'application/vnd.oci.image.index.v1+json', repository: 'example/app', tag: '2.0.0' },
              request: { host: 'Registry-1.Docker.IO' },
            },
          ],
        },
        ctx,
      ),
    );
    expect(repository).toBe('docker.io/example/app');
  });
});
