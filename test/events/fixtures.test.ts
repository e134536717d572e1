import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizers } from '../../src/events/index.js';
import type { ImagePublished, NormalizeContext, NormalizeResult, Source } from '../../src/events/index.js';

/**
 * One test per real payload: the vendors' documented examples, @octokit/webhooks-examples, and
 * what Debian's docker-registry 2.8 really sends. Each asserts the exact result.
 */

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'registry');
const ctx: NormalizeContext = { deliveryId: 'delivery-1', receivedAt: '2026-01-02T03:04:05.000Z' };

function fixture(path: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, path), 'utf8'));
}

function image(source: Source, repository: string, tag: string, digest?: string): ImagePublished {
  const registry = repository.slice(0, repository.indexOf('/'));
  return { registry, repository, tag, ...(digest ? { digest } : {}), source, deliveryId: ctx.deliveryId, receivedAt: ctx.receivedAt };
}

function images(...events: ImagePublished[]): NormalizeResult {
  return { kind: 'images', events };
}

interface Case {
  file: string;
  expected: NormalizeResult;
}

const D_SINGLE = 'sha256:b90f6bc81b99aab838f42edf589885c830372bb8d458fd39fb570c29f413b908';
const D_INDEX = 'sha256:1648cfc64a7fd9da0b2ed635e637982394d5c61d138a36ad4f101079974b383e';
const DEBIAN_HOST = '127.0.0.1:35471';

const cases: Record<Exclude<Source, 'ci' | 'github'>, Case[]> = {
  dockerhub: [{ file: 'webhook-example.json', expected: images(image('dockerhub', 'docker.io/svendowideit/testhook', 'latest')) }],
  harbor: [
    {
      file: 'push-artifact-default.json',
      expected: images(image('harbor', 'hub.harbor.com/test-webhook/debian', 'latest', 'sha256:8a9e9863dbb6e10edb5adfe917c00da84e1700fa76e7ed02476aa6e6fb8ee0d8')),
    },
    {
      file: 'cloudevents-pushed.json',
      expected: images(image('harbor', 'hub.harbor.com/test-webhook/debian', 'latest', 'sha256:8a9e9863dbb6e10edb5adfe917c00da84e1700fa76e7ed02476aa6e6fb8ee0d8')),
    },
    { file: 'cloudevents-pulled.json', expected: { kind: 'ignored', reason: 'pull', detail: 'event type "harbor.artifact.pulled"' } },
  ],
  quay: [
    { file: 'repository-push.json', expected: images(image('quay', 'quay.io/dgangaia/test', 'latest')) },
    { file: 'repository-push-legacy.json', expected: images(image('quay', 'quay.io/devtable/ubuntu', 'latest')) },
  ],
  acr: [
    {
      file: 'push.json',
      expected: images(image('acr', 'myregistry.azurecr.io/hello-world', 'v1', 'sha256:80f0d5c8786bb9e621a45ece0db56d11cdc624ad20da9fe62e9d25490f331d7d')),
    },
    { file: 'delete.json', expected: { kind: 'ignored', reason: 'delete', detail: 'action "delete"' } },
  ],
  gar: [
    {
      file: 'push-insert-tagged.json',
      expected: images(image('gar', 'us-east1-docker.pkg.dev/my-project/my-repo/hello-world', '1.1', 'sha256:afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d')),
    },
    {
      file: 'unwrapped-insert-tagged.json',
      expected: images(image('gar', 'us-east1-docker.pkg.dev/my-project/my-repo/hello-world', '1.1', 'sha256:afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d')),
    },
    {
      file: 'push-insert-untagged.json',
      expected: {
        kind: 'ignored',
        reason: 'untagged',
        detail: 'INSERT of us-east1-docker.pkg.dev/my-project/my-repo/hello-world@sha256:afa27b44d43b02a9fea41d13cedc2e4016cfcf87c5dbf990e593669aa8ce286d without a tag',
      },
    },
    { file: 'push-delete.json', expected: { kind: 'ignored', reason: 'delete', detail: 'action "DELETE" for us-east1-docker.pkg.dev/my-project/my-repo/hello-world:1.1' } },
  ],
  ecr: [
    {
      file: 'image-push.json',
      expected: {
        kind: 'invalid',
        message: 'ecr: detail.image-digest "sha256:7f5b2640fe6fb4f46592dfd3410c4a79dac4f89e4782432e0378abcd1234" is not a valid digest; expected algorithm:hex such as sha256:<64 lowercase hex characters>',
      },
    },
    {
      file: 'image-push-full-digest.json',
      expected: images(image('ecr', '123456789012.dkr.ecr.us-west-2.amazonaws.com/my-repository-name', 'latest', 'sha256:7f5b2640fe6fb4f46592dfd3410c4a79dac4f89e4782432e0378abcd12345678')),
    },
    { file: 'image-delete.json', expected: { kind: 'ignored', reason: 'delete', detail: 'action-type "DELETE"' } },
    { file: 'image-scan.json', expected: { kind: 'ignored', reason: 'not-a-push', detail: 'detail-type "ECR Image Scan"' } },
  ],
  distribution: [
    { file: 'debian-2.8-01-push-single.json', expected: { kind: 'ignored', reason: 'blob', detail: 'blob sha256:bd9ddc54bea929a22b334e73e026d4136e5b73f5cc29942896c72e4ece69b13d (application/octet-stream)' } },
    { file: 'debian-2.8-02-push-single.json', expected: { kind: 'ignored', reason: 'blob', detail: 'blob sha256:c7ab96614ff0e23444f904ceec8c300ede87aa3b7aa4998fff62376703a04b20 (application/octet-stream)' } },
    { file: 'debian-2.8-03-push-single.json', expected: images(image('distribution', `${DEBIAN_HOST}/team/app`, '1.2.3', D_SINGLE)) },
    { file: 'debian-2.8-04-push-index.json', expected: { kind: 'ignored', reason: 'pull', detail: 'pull of team/app' } },
    { file: 'debian-2.8-05-push-index.json', expected: { kind: 'ignored', reason: 'pull', detail: 'pull of team/app' } },
    { file: 'debian-2.8-06-push-index.json', expected: { kind: 'ignored', reason: 'untagged', detail: 'the push carries no tag (pushed by digest)' } },
    { file: 'debian-2.8-07-push-index.json', expected: { kind: 'ignored', reason: 'pull', detail: 'pull of team/app' } },
    { file: 'debian-2.8-08-push-index.json', expected: { kind: 'ignored', reason: 'blob', detail: 'blob sha256:50453fffd08d82f5b58d567998fefc6fd344969c11e64d50faade59a94313f61 (application/octet-stream)' } },
    { file: 'debian-2.8-09-push-index.json', expected: { kind: 'ignored', reason: 'untagged', detail: 'the push carries no tag (pushed by digest)' } },
    { file: 'debian-2.8-10-push-index.json', expected: images(image('distribution', `${DEBIAN_HOST}/team/app`, '2.0.0', D_INDEX)) },
    { file: 'debian-2.8-11-pull.json', expected: { kind: 'ignored', reason: 'pull', detail: 'pull of team/app' } },
    { file: 'debian-2.8-12-delete.json', expected: { kind: 'ignored', reason: 'delete', detail: 'delete in team/app' } },
    { file: 'debian-2.8-13-delete.json', expected: { kind: 'ignored', reason: 'delete', detail: 'delete in team/app' } },
    {
      file: 'docs-push-envelope.json',
      expected: {
        kind: 'ignored',
        reason: 'untagged',
        detail:
          'untagged: the push carries no tag (pushed by digest); ' +
          'blob: blob sha256:c3b3692957d439ac1928219a83fac91e7bf96c153725526874673ae1f2023f8d5 (application/vnd.docker.container.image.rootfs.diff+x-gtar); ' +
          'blob: blob sha256:c3b3692957d439ac1928219a83fac91e7bf96c153725526874673ae1f2023f8d5 (application/vnd.docker.container.image.rootfs.diff+x-gtar)',
      },
    },
    { file: 'docs-pull-example.json', expected: { kind: 'ignored', reason: 'pull', detail: 'pull of hello-world' } },
  ],
};

describe('registry fixtures', () => {
  for (const [source, list] of Object.entries(cases) as [Exclude<Source, 'ci' | 'github'>, Case[]][]) {
    describe(source, () => {
      it.each(list)('$file', ({ file, expected }) => {
        expect(normalizers[source](fixture(`${source}/${file}`), ctx)).toEqual(expected);
      });
    });
  }

  it('covers every fixture file on disk', () => {
    for (const [source, list] of Object.entries(cases)) {
      const onDisk = readdirSync(join(FIXTURES, source)).filter((f) => f.endsWith('.json') && f !== 'debian-2.8-headers.json');
      expect(list.map((c) => c.file).sort()).toEqual(onDisk.sort());
    }
  });

  it('the Debian registry delivers with the v1 envelope media type', () => {
    expect(fixture('distribution/debian-2.8-headers.json')).toMatchObject({ method: 'POST', 'content-type': 'application/vnd.docker.distribution.events.v1+json' });
  });
});

describe('github fixtures', () => {
  const require = createRequire(import.meta.url);
  const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as { name: string; examples: unknown[] }[];
  const packageExamples = examples.find((e) => e.name === 'package')?.examples ?? [];

  it('@octokit/webhooks-examples has the three package examples this table expects', () => {
    expect(packageExamples).toHaveLength(3);
  });

  it.each([
    { index: 0, expected: { kind: 'ignored', reason: 'not-a-container', detail: 'package.package_type "npm"' } },
    // Its registry is the CONTAINER registry and its container_metadata.tag.name is empty: an untagged manifest.
    { index: 1, expected: { kind: 'ignored', reason: 'untagged', detail: 'the push carries no tag (pushed by digest)' } },
    { index: 2, expected: { kind: 'ignored', reason: 'not-a-container', detail: 'package.package_type "npm"' } },
  ])('@octokit/webhooks-examples package example $index', ({ index, expected }) => {
    expect(normalizers.github(packageExamples[index], ctx)).toEqual(expected);
  });

  const multiarch = fixture('github/package-published-multiarch.json') as Record<string, unknown>;
  const expected = images(image('github', 'ghcr.io/theryangeary/www', '0e2a89b', 'sha256:89160c587d0c36bf54090497a465445c14980ba48efbcf3b0d03c49b76f3feb8'));

  it('package-published-multiarch.json (the tagged index of a two-platform image)', () => {
    expect(normalizers.github(multiarch, ctx)).toEqual(expected);
  });

  it('package-published-multiarch.json delivered as registry_package, as a GitHub App receives it', () => {
    const { package: pkg, ...rest } = multiarch;
    expect(normalizers.github({ ...rest, registry_package: pkg }, ctx)).toEqual(expected);
  });
});
