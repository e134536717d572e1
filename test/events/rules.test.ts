import { describe, expect, it } from 'vitest';
import { eventKey, ImagePublished, normalizeCiImage, normalizers } from '../../src/events/index.js';
import type { IgnoreReason, NormalizeContext, NormalizeResult, Normalizer, Source } from '../../src/events/index.js';

/**
 * The rules shared by all normalizers, one table each: every ignore reason, every invalid
 * shape with its message, names, hosts, event keys and the CI body.
 */

const ctx: NormalizeContext = { deliveryId: 'delivery-1', receivedAt: '2026-01-02T03:04:05.000Z' };
const D = `sha256:${'a'.repeat(64)}`;
const D2 = `sha256:${'b'.repeat(64)}`;
const HEX64 = 'c'.repeat(64);

const dockerhub = (tag: unknown, repoName: unknown = 'example/app'): unknown => ({
  push_data: { tag },
  repository: { repo_name: repoName },
});
const quay = (tags: unknown, dockerUrl = 'quay.io/example/app'): unknown => ({
  docker_url: dockerUrl,
  updated_tags: tags,
});
const acr = (
  action: string,
  target: Record<string, unknown> = { repository: 'app', tag: 'v1', digest: D },
  host: string | undefined = 'example.azurecr.io',
): unknown => ({
  action,
  target,
  ...(host ? { request: { host } } : {}),
});
const ecr = (detail: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({
  'detail-type': 'ECR Image Action',
  account: '123456789012',
  region: 'eu-west-1',
  detail: {
    result: 'SUCCESS',
    'action-type': 'PUSH',
    'repository-name': 'app',
    'image-digest': D,
    'image-tag': 'v1',
    ...detail,
  },
  ...extra,
});
const harbor = (
  type: string,
  resources: unknown[] = [{ tag: 'v1', digest: D, resource_url: 'harbor.example.com/team/app:v1' }],
): unknown => ({
  type,
  event_data: { resources, repository: { repo_full_name: 'team/app' } },
});
const garMessage = (message: unknown): unknown => ({
  message: { data: Buffer.from(JSON.stringify(message)).toString('base64'), messageId: '1' },
  subscription: 'projects/p/subscriptions/s',
});
const distEvent = (
  action: string,
  target: Record<string, unknown>,
  host: string | null = 'registry.example.com:5000',
): Record<string, unknown> => ({
  action,
  target: { repository: 'team/app', ...target },
  ...(host ? { request: { host } } : {}),
});
const envelope = (...events: unknown[]): unknown => ({ events });
const manifest = 'application/vnd.oci.image.manifest.v1+json';
const index = 'application/vnd.oci.image.index.v1+json';
const github = (action: string, pkg: Record<string, unknown>): unknown => ({
  action,
  registry_package: {
    name: 'hello',
    package_type: 'CONTAINER',
    owner: { login: 'Example' },
    package_version: { container_metadata: { tag: { name: 'v1', digest: D } } },
    ...pkg,
  },
});

function event(source: Source, repository: string, tag: string, digest?: string): ImagePublished {
  return {
    registry: repository.slice(0, repository.indexOf('/')),
    repository,
    tag,
    ...(digest ? { digest } : {}),
    source,
    deliveryId: ctx.deliveryId,
    receivedAt: ctx.receivedAt,
  };
}

describe('ignore reasons', () => {
  const cases: { name: string; normalize: Normalizer; payload: unknown; reason: IgnoreReason; detail: string }[] = [
    {
      name: 'github: a deleted package',
      normalize: normalizers.github,
      payload: github('deleted', {}),
      reason: 'not-a-push',
      detail: 'registry_package action "deleted"',
    },
    {
      name: 'harbor: a scan finished',
      normalize: normalizers.harbor,
      payload: { type: 'SCANNING_COMPLETED' },
      reason: 'not-a-push',
      detail: 'event type "SCANNING_COMPLETED"',
    },
    {
      name: 'acr: quarantine',
      normalize: normalizers.acr,
      payload: acr('quarantine'),
      reason: 'not-a-push',
      detail: 'action "quarantine"',
    },
    {
      name: 'acr: the portal ping',
      normalize: normalizers.acr,
      payload: acr('ping'),
      reason: 'not-a-push',
      detail: 'action "ping"',
    },
    {
      name: 'ecr: a failed push',
      normalize: normalizers.ecr,
      payload: ecr({ result: 'FAILURE' }),
      reason: 'not-a-push',
      detail: 'push with result "FAILURE"',
    },
    {
      name: 'ecr: a replication action',
      normalize: normalizers.ecr,
      payload: ecr({ 'action-type': 'REPLICATE' }),
      reason: 'not-a-push',
      detail: 'action-type "REPLICATE"',
    },
    {
      name: 'quay: a build notification',
      normalize: normalizers.quay,
      payload: { build_id: 'b1', docker_url: 'quay.io/a/b', docker_tags: ['latest'] },
      reason: 'not-a-push',
      detail: 'a Quay build notification',
    },
    {
      name: 'gar: an unknown action',
      normalize: normalizers.gar,
      payload: garMessage({ action: 'UPDATE', tag: 'europe-docker.pkg.dev/p/r/i:1' }),
      reason: 'not-a-push',
      detail: 'action "UPDATE"',
    },
    {
      name: 'distribution: a blob mount',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('mount', { mediaType: 'application/octet-stream', digest: D })),
      reason: 'not-a-push',
      detail: 'action "mount"',
    },
    {
      name: 'distribution: an empty envelope',
      normalize: normalizers.distribution,
      payload: envelope(),
      reason: 'not-a-push',
      detail: 'the envelope holds no events',
    },

    {
      name: 'dockerhub: an empty tag',
      normalize: normalizers.dockerhub,
      payload: dockerhub(''),
      reason: 'untagged',
      detail: 'the push carries no tag (pushed by digest)',
    },
    {
      name: 'quay: no updated tags',
      normalize: normalizers.quay,
      payload: quay([]),
      reason: 'untagged',
      detail: 'updated_tags is empty',
    },
    {
      name: 'acr: a push by digest',
      normalize: normalizers.acr,
      payload: acr('push', { repository: 'app', digest: D }),
      reason: 'untagged',
      detail: 'the push carries no tag (pushed by digest)',
    },
    {
      name: 'ecr: a push without image-tag',
      normalize: normalizers.ecr,
      payload: ecr({ 'image-tag': undefined }),
      reason: 'untagged',
      detail: 'the push carries no tag (pushed by digest)',
    },
    {
      name: 'harbor: a resource without tag',
      normalize: normalizers.harbor,
      payload: harbor('PUSH_ARTIFACT', [{ digest: D, resource_url: 'harbor.example.com/team/app@' + D }]),
      reason: 'untagged',
      detail: 'the push carries no tag (pushed by digest)',
    },
    {
      name: 'harbor: no resources',
      normalize: normalizers.harbor,
      payload: harbor('PUSH_ARTIFACT', []),
      reason: 'untagged',
      detail: 'event_data.resources is empty',
    },
    {
      name: 'github: a per-platform manifest (empty tag name)',
      normalize: normalizers.github,
      payload: github('published', { package_version: { container_metadata: { tag: { name: '', digest: D } } } }),
      reason: 'untagged',
      detail: 'the push carries no tag (pushed by digest)',
    },

    {
      name: 'harbor: tag is the digest',
      normalize: normalizers.harbor,
      payload: harbor('PUSH_ARTIFACT', [{ tag: D, digest: D, resource_url: `harbor.example.com/team/app@${D}` }]),
      reason: 'digest-tag',
      detail: `tag "${D}" is a digest, not a tag`,
    },
    {
      name: 'distribution: a 64-hex tag',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('push', { mediaType: manifest, digest: D, tag: HEX64 })),
      reason: 'digest-tag',
      detail: `tag "${HEX64}" is a digest, not a tag`,
    },

    {
      name: 'acr: a cosign signature',
      normalize: normalizers.acr,
      payload: acr('push', { repository: 'app', tag: `sha256-${HEX64}.sig`, digest: D }),
      reason: 'signature-or-attestation',
      detail: `tag "sha256-${HEX64}.sig" is a cosign signature, attestation, SBOM or referrers tag`,
    },
    {
      name: 'quay: a cosign attestation',
      normalize: normalizers.quay,
      payload: quay([`sha256-${HEX64}.att`]),
      reason: 'signature-or-attestation',
      detail: `tag "sha256-${HEX64}.att" is a cosign signature, attestation, SBOM or referrers tag`,
    },
    {
      name: 'ecr: a cosign SBOM',
      normalize: normalizers.ecr,
      payload: ecr({ 'image-tag': `sha256-${HEX64}.sbom` }),
      reason: 'signature-or-attestation',
      detail: `tag "sha256-${HEX64}.sbom" is a cosign signature, attestation, SBOM or referrers tag`,
    },
    {
      name: 'distribution: an OCI referrers fallback tag',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('push', { mediaType: index, digest: D, tag: `sha256-${HEX64}` })),
      reason: 'signature-or-attestation',
      detail: `tag "sha256-${HEX64}" is a cosign signature, attestation, SBOM or referrers tag`,
    },

    {
      name: 'quay: a tag starting with "-"',
      normalize: normalizers.quay,
      payload: quay(['-rc1']),
      reason: 'invalid-tag',
      detail: 'tag "-rc1" is not a valid Docker tag',
    },
    {
      name: 'dockerhub: a 129-character tag',
      normalize: normalizers.dockerhub,
      payload: dockerhub('v'.repeat(129)),
      reason: 'invalid-tag',
      detail: `tag "${'v'.repeat(129)}" is not a valid Docker tag`,
    },

    {
      name: 'distribution: a platform manifest of an index in the same envelope (registry 3)',
      normalize: normalizers.distribution,
      payload: envelope(
        distEvent('push', { mediaType: manifest, digest: D2 }),
        distEvent('push', {
          mediaType: index,
          digest: D,
          tag: '2.0.0',
          references: [{ mediaType: manifest, digest: D2 }],
        }),
      ),
      reason: 'platform-child',
      detail: 'unused: this envelope has an image, see the next table',
    },

    {
      name: 'github: an npm package',
      normalize: normalizers.github,
      payload: github('published', { package_type: 'npm' }),
      reason: 'not-a-container',
      detail: 'registry_package.package_type "npm"',
    },
    {
      name: 'github: the retired docker.pkg.github.com registry',
      normalize: normalizers.github,
      payload: github('published', { package_type: 'docker' }),
      reason: 'not-a-container',
      detail:
        'registry_package.package_type "docker" (the retired docker.pkg.github.com registry; push to ghcr.io instead)',
    },
    {
      name: 'acr: a Helm chart',
      normalize: normalizers.acr,
      payload: acr('chart_push'),
      reason: 'not-a-container',
      detail: 'action "chart_push"',
    },
    {
      name: 'harbor: a chart upload',
      normalize: normalizers.harbor,
      payload: { type: 'UPLOAD_CHART' },
      reason: 'not-a-container',
      detail: 'event type "UPLOAD_CHART"',
    },

    {
      name: 'distribution: a layer',
      normalize: normalizers.distribution,
      payload: envelope(
        distEvent('push', {
          mediaType: 'application/octet-stream',
          digest: D,
          url: 'https://r.example.com/v2/team/app/blobs/' + D,
        }),
      ),
      reason: 'blob',
      detail: `blob ${D} (application/octet-stream)`,
    },

    {
      name: 'distribution: a manifest pull',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('pull', { mediaType: manifest, digest: D, tag: 'v1' })),
      reason: 'pull',
      detail: 'pull of team/app',
    },
    {
      name: 'harbor: a pull',
      normalize: normalizers.harbor,
      payload: { type: 'PULL_ARTIFACT' },
      reason: 'pull',
      detail: 'event type "PULL_ARTIFACT"',
    },

    {
      name: 'acr: a delete',
      normalize: normalizers.acr,
      payload: acr('delete'),
      reason: 'delete',
      detail: 'action "delete"',
    },
    {
      name: 'acr: a chart delete',
      normalize: normalizers.acr,
      payload: acr('chart_delete'),
      reason: 'delete',
      detail: 'action "chart_delete"',
    },
    {
      name: 'ecr: a delete',
      normalize: normalizers.ecr,
      payload: ecr({ 'action-type': 'DELETE' }),
      reason: 'delete',
      detail: 'action-type "DELETE"',
    },
    {
      name: 'gar: a delete',
      normalize: normalizers.gar,
      payload: garMessage({ action: 'DELETE', digest: `europe-docker.pkg.dev/p/r/i@${D}` }),
      reason: 'delete',
      detail: `action "DELETE" for europe-docker.pkg.dev/p/r/i@${D}`,
    },
    {
      name: 'harbor: a delete',
      normalize: normalizers.harbor,
      payload: { type: 'DELETE_ARTIFACT' },
      reason: 'delete',
      detail: 'event type "DELETE_ARTIFACT"',
    },
    {
      name: 'harbor: a CloudEvents delete',
      normalize: normalizers.harbor,
      payload: { specversion: '1.0', type: 'harbor.artifact.deleted' },
      reason: 'delete',
      detail: 'event type "harbor.artifact.deleted"',
    },
    {
      name: 'distribution: a delete',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('delete', { digest: D })),
      reason: 'delete',
      detail: 'delete in team/app',
    },
  ];

  it.each(cases.filter((c) => c.reason !== 'platform-child'))(
    '$name → $reason',
    ({ normalize, payload, reason, detail }) => {
      expect(normalize(payload, ctx)).toEqual({ kind: 'ignored', reason, detail });
    },
  );

  it('distribution: a platform manifest of an index in the same envelope is counted as platform-child', () => {
    const payload = cases.find((c) => c.reason === 'platform-child')?.payload;
    expect(normalizers.distribution(payload, ctx)).toEqual({
      kind: 'images',
      events: [event('distribution', 'registry.example.com:5000/team/app', '2.0.0', D)],
      ignored: [
        { reason: 'platform-child', detail: `manifest ${D2} is a platform of an index pushed in the same envelope` },
      ],
    });
  });

  it('covers every ignore reason', () => {
    const all: IgnoreReason[] = [
      'not-a-push',
      'untagged',
      'digest-tag',
      'signature-or-attestation',
      'invalid-tag',
      'platform-child',
      'not-a-container',
      'blob',
      'pull',
      'delete',
    ];
    expect(new Set(cases.map((c) => c.reason))).toEqual(new Set(all));
  });
});

describe('invalid payloads', () => {
  const hint = {
    github: 'Send the body of a GitHub `registry_package` or `package` webhook delivery unchanged.',
    dockerhub: 'Send the body of a Docker Hub webhook unchanged (it needs push_data.tag and repository.repo_name).',
    harbor: 'Send the body of a Harbor webhook (payload format Default or CloudEvents) unchanged.',
    quay: 'Send the body of a Quay "Push to Repository" webhook notification unchanged (it needs docker_url and updated_tags).',
    acr: 'Send the body of an Azure Container Registry webhook (action push) unchanged.',
    gar: 'Send the Pub/Sub push request for the Artifact Registry `gcr` topic unchanged (or its unwrapped message data).',
    ecr: 'Send the whole EventBridge event (detail-type "ECR Image Action", source aws.ecr) unchanged, without an input transformer.',
    distribution: 'Send the registry notification envelope ({"events": [...]}) unchanged.',
  };
  const cases: {
    name: string;
    normalize: Normalizer;
    payload: unknown;
    message: string;
    context?: Partial<NormalizeContext>;
  }[] = [
    {
      name: 'github: no action',
      normalize: normalizers.github,
      payload: {},
      message: `github: action is missing (expected string). ${hint.github}`,
    },
    {
      name: 'github: neither package key',
      normalize: normalizers.github,
      payload: { action: 'published' },
      message: `github: registry_package is missing (and so is package). ${hint.github}`,
    },
    {
      name: 'github: a package without owner and version',
      normalize: normalizers.github,
      payload: { action: 'published', package: { name: 'x', package_type: 'CONTAINER' } },
      message: `github: package.owner is missing (expected object); package.package_version is missing (expected object). ${hint.github}`,
    },
    {
      name: 'github: a malformed digest on a tagged version',
      normalize: normalizers.github,
      payload: github('published', {
        package_version: {
          container_metadata: { tag: { name: 'v1', digest: 'sha256:6c62fb45fe66bfb1ea9a66abc38f6a0cc974292b' } },
        },
      }),
      message:
        'github: registry_package.package_version.container_metadata.tag.digest "sha256:6c62fb45fe66bfb1ea9a66abc38f6a0cc974292b" is not a valid digest; expected algorithm:hex such as sha256:<64 lowercase hex characters>',
    },
    {
      name: 'dockerhub: an empty object',
      normalize: normalizers.dockerhub,
      payload: {},
      message: `dockerhub: push_data is missing (expected object); repository is missing (expected object). ${hint.dockerhub}`,
    },
    {
      name: 'dockerhub: the pre-2015 payload without push_data.tag',
      normalize: normalizers.dockerhub,
      payload: { push_data: { images: [HEX64] }, repository: { repo_name: 'a/b' } },
      message: `dockerhub: push_data.tag is missing (expected string). ${hint.dockerhub}`,
    },
    {
      name: 'dockerhub: a numeric tag',
      normalize: normalizers.dockerhub,
      payload: dockerhub(1),
      message: `dockerhub: push_data.tag must be string, not number 1. ${hint.dockerhub}`,
    },
    {
      name: 'dockerhub: an uppercase repository',
      normalize: normalizers.dockerhub,
      payload: dockerhub('v1', 'Example/App'),
      message:
        'dockerhub: repository.repo_name "Example/App" is not a valid repository path (repository paths are lowercase); expected lowercase components separated by "/", e.g. team/app',
    },
    {
      name: 'harbor: no type',
      normalize: normalizers.harbor,
      payload: { event_data: {} },
      message: `harbor: type is missing (expected string). ${hint.harbor}`,
    },
    {
      name: 'harbor: a push without event_data',
      normalize: normalizers.harbor,
      payload: { type: 'PUSH_ARTIFACT' },
      message: `harbor: event_data is missing (expected object). ${hint.harbor}`,
    },
    {
      name: 'harbor: a CloudEvents push without data',
      normalize: normalizers.harbor,
      payload: { specversion: '1.0', type: 'harbor.artifact.pushed' },
      message: `harbor: data is missing (expected object). ${hint.harbor}`,
    },
    {
      name: 'harbor: resources is not a list',
      normalize: normalizers.harbor,
      payload: { type: 'PUSH_ARTIFACT', event_data: { resources: {}, repository: { repo_full_name: 'a/b' } } },
      message: `harbor: event_data.resources must be array, not an object. ${hint.harbor}`,
    },
    {
      name: 'harbor: no resource_url registry',
      normalize: normalizers.harbor,
      payload: harbor('PUSH_ARTIFACT', [{ tag: 'v1', digest: D }]),
      message:
        'harbor: event_data.resources[0].resource_url is missing, so the registry host is unknown; the registry sends it in every notification, so send its payload unchanged (a payload rebuilt by hand or by a proxy must keep event_data.resources[0].resource_url)',
    },
    {
      name: 'quay: no updated_tags',
      normalize: normalizers.quay,
      payload: { docker_url: 'quay.io/a/b' },
      message: `quay: updated_tags is missing. ${hint.quay}`,
    },
    {
      name: 'quay: updated_tags of the wrong type',
      normalize: normalizers.quay,
      payload: quay('latest'),
      message: `quay: updated_tags has an unexpected shape ("latest"). ${hint.quay}`,
    },
    {
      name: 'quay: no docker_url',
      normalize: normalizers.quay,
      payload: { updated_tags: ['v1'] },
      message: `quay: docker_url is missing (expected string). ${hint.quay}`,
    },
    {
      name: 'acr: no action',
      normalize: normalizers.acr,
      payload: { target: {} },
      message: `acr: action is missing (expected string). ${hint.acr}`,
    },
    {
      name: 'acr: a push without repository',
      normalize: normalizers.acr,
      payload: acr('push', { tag: 'v1' }),
      message: `acr: target.repository is missing (expected string). ${hint.acr}`,
    },
    {
      name: 'acr: a bad registry host',
      normalize: normalizers.acr,
      payload: acr('push', { repository: 'app', tag: 'v1' }, 'not a host'),
      message:
        'acr: request.host "not a host" is not a registry host name (expected host[:port], e.g. registry.example.com:5000)',
    },
    {
      name: 'gar: message without data',
      normalize: normalizers.gar,
      payload: { message: {} },
      message: `gar: message.data is missing (expected string). ${hint.gar}`,
    },
    {
      name: 'gar: data that is not base64',
      normalize: normalizers.gar,
      payload: { message: { data: 'not base64!' } },
      message: `gar: message.data is not base64-encoded JSON. ${hint.gar}`,
    },
    {
      name: 'gar: base64 that is not JSON',
      normalize: normalizers.gar,
      payload: { message: { data: Buffer.from('INSERT').toString('base64') } },
      message: `gar: message.data is not base64-encoded JSON. ${hint.gar}`,
    },
    {
      name: 'gar: a message without action',
      normalize: normalizers.gar,
      payload: garMessage({ tag: 'x' }),
      message: `gar: message.data.action is missing (expected string). ${hint.gar}`,
    },
    {
      name: 'gar: a bare tag',
      normalize: normalizers.gar,
      payload: garMessage({ action: 'INSERT', tag: 'v1.0.0' }),
      message:
        'gar: message.data.tag "v1.0.0" is not a full image reference; expected host/project/repository/image:tag',
    },
    {
      name: 'gar: digest and tag of different images',
      normalize: normalizers.gar,
      payload: garMessage({
        action: 'INSERT',
        digest: `europe-docker.pkg.dev/p/r/a@${D}`,
        tag: 'europe-docker.pkg.dev/p/r/b:1',
      }),
      message:
        'gar: message.data.digest names "europe-docker.pkg.dev/p/r/a" but message.data.tag names "europe-docker.pkg.dev/p/r/b"; both must name the same image',
    },
    {
      name: 'ecr: no detail-type',
      normalize: normalizers.ecr,
      payload: { detail: {} },
      message: `ecr: detail-type is missing (expected string). ${hint.ecr}`,
    },
    {
      name: 'ecr: an input-transformed event',
      normalize: normalizers.ecr,
      payload: { 'detail-type': 'ECR Image Action', detail: { 'action-type': 'PUSH' } },
      message: `ecr: account is missing (expected string); region is missing (expected string); detail.result is missing (expected string); detail.repository-name is missing (expected string). ${hint.ecr}`,
    },
    {
      name: 'ecr: a malformed account',
      normalize: normalizers.ecr,
      payload: ecr({}, { account: '1234' }),
      message: `ecr: account: must be a 12-digit AWS account id. ${hint.ecr}`,
    },
    {
      name: 'distribution: not an envelope',
      normalize: normalizers.distribution,
      payload: { action: 'push' },
      message: `distribution: events is missing (expected array). ${hint.distribution}`,
    },
    {
      name: 'distribution: an event without target',
      normalize: normalizers.distribution,
      payload: envelope({ action: 'push' }),
      message: `distribution: events[0].target is missing (expected object). ${hint.distribution}`,
    },
    {
      name: 'distribution: a tagged manifest push without repository',
      normalize: normalizers.distribution,
      payload: envelope({
        action: 'push',
        target: { mediaType: manifest, digest: D, tag: 'v1' },
        request: { host: 'r.example.com' },
      }),
      message: `distribution: events[0].target.repository is missing for a manifest pushed by tag. ${hint.distribution}`,
    },
    {
      name: 'distribution: no host anywhere registry',
      normalize: normalizers.distribution,
      payload: envelope(distEvent('push', { mediaType: manifest, digest: D, tag: 'v1' }, null)),
      message:
        'distribution: events[0].request.host is missing, so the registry host is unknown; the registry sends it in every notification, so send its payload unchanged (a payload rebuilt by hand or by a proxy must keep events[0].request.host)',
    },
  ];

  it.each(cases)('$name', ({ normalize, payload, message, context }) => {
    expect(normalize(payload, { ...ctx, ...context })).toEqual({ kind: 'invalid', message });
  });

  const everyNormalizer = [...Object.entries(normalizers), ['ci', normalizeCiImage] as const];
  it.each(
    everyNormalizer.flatMap(([name, normalize]) =>
      [null, [], 'text', 42].map((payload) => ({ name, normalize, payload })),
    ),
  )('$name: a body of $payload is invalid, not an exception', ({ normalize, payload }) => {
    const result = normalize(payload, ctx);
    expect(result.kind).toBe('invalid');
    expect((result as { message: string }).message).toMatch(/^[a-z]+: .*(missing|must be)/);
  });
});

describe('names and hosts', () => {
  const cases: {
    name: string;
    normalize: Normalizer;
    payload: unknown;
    context?: Partial<NormalizeContext>;
    expected: NormalizeResult;
  }[] = [
    {
      name: 'dockerhub: an official image gets library/',
      normalize: normalizers.dockerhub,
      payload: dockerhub('1.25', 'nginx'),
      expected: { kind: 'images', events: [event('dockerhub', 'docker.io/library/nginx', '1.25')] },
    },
    {
      name: 'github: owner and package name are lowercased',
      normalize: normalizers.github,
      payload: github('published', { name: 'Team/Hello' }),
      expected: { kind: 'images', events: [event('github', 'ghcr.io/example/team/hello', 'v1', D)] },
    },
    {
      name: 'github: updated (a tag moved) is a push',
      normalize: normalizers.github,
      payload: github('updated', {}),
      expected: { kind: 'images', events: [event('github', 'ghcr.io/example/hello', 'v1', D)] },
    },
    {
      name: 'ecr: China regions live under amazonaws.com.cn',
      normalize: normalizers.ecr,
      payload: ecr({}, { region: 'cn-north-1' }),
      expected: {
        kind: 'images',
        events: [event('ecr', '123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app', 'v1', D)],
      },
    },
    {
      name: 'distribution: Docker Hub aliases fold into docker.io',
      normalize: normalizers.distribution,
      payload: envelope(
        distEvent('push', { mediaType: manifest, digest: D, tag: 'v1', repository: 'nginx' }, 'Registry-1.Docker.io'),
      ),
      expected: { kind: 'images', events: [event('distribution', 'docker.io/library/nginx', 'v1', D)] },
    },
    {
      name: 'distribution: without request.host the URL host is used',
      normalize: normalizers.distribution,
      payload: envelope(
        distEvent(
          'push',
          { mediaType: manifest, digest: D, tag: 'v1', url: `https://registry.example.com/v2/team/app/manifests/${D}` },
          null,
        ),
      ),
      expected: { kind: 'images', events: [event('distribution', 'registry.example.com/team/app', 'v1', D)] },
    },
    {
      name: 'distribution: an unknown manifest media type still counts by its URL',
      normalize: normalizers.distribution,
      payload: envelope(
        distEvent('push', {
          mediaType: 'application/vnd.example.manifest.v9+json',
          digest: D,
          tag: 'v1',
          url: `https://r.example.com/v2/team/app/manifests/${D}`,
        }),
      ),
      expected: { kind: 'images', events: [event('distribution', 'registry.example.com:5000/team/app', 'v1', D)] },
    },
    {
      name: 'gar: a bare tag next to a full digest reference',
      normalize: normalizers.gar,
      payload: garMessage({ action: 'INSERT', digest: `europe-docker.pkg.dev/p/r/i@${D}`, tag: 'v1.0.0' }),
      expected: { kind: 'images', events: [event('gar', 'europe-docker.pkg.dev/p/r/i', 'v1.0.0', D)] },
    },
    {
      name: 'quay: a tag listed twice is one event',
      normalize: normalizers.quay,
      payload: quay(['v1', 'v1']),
      expected: { kind: 'images', events: [event('quay', 'quay.io/example/app', 'v1')] },
    },
    {
      name: 'quay: a self-hosted Quay with a port, several tags',
      normalize: normalizers.quay,
      payload: quay(['1.2.3', 'latest'], 'quay.example.com:8443/team/app'),
      expected: {
        kind: 'images',
        events: [
          event('quay', 'quay.example.com:8443/team/app', '1.2.3'),
          event('quay', 'quay.example.com:8443/team/app', 'latest'),
        ],
      },
    },
    {
      name: 'harbor: one push with a tag and a signature is one image plus one ignored',
      normalize: normalizers.harbor,
      payload: harbor('PUSH_ARTIFACT', [
        { tag: 'v1', digest: D, resource_url: 'harbor.example.com/team/app:v1' },
        { tag: `sha256-${HEX64}.sig`, digest: D2, resource_url: `harbor.example.com/team/app:sha256-${HEX64}.sig` },
      ]),
      expected: {
        kind: 'images',
        events: [event('harbor', 'harbor.example.com/team/app', 'v1', D)],
        ignored: [
          {
            reason: 'signature-or-attestation',
            detail: `tag "sha256-${HEX64}.sig" is a cosign signature, attestation, SBOM or referrers tag`,
          },
        ],
      },
    },
  ];

  it.each(cases)('$name', ({ normalize, payload, context, expected }) => {
    expect(normalize(payload, { ...ctx, ...context })).toEqual(expected);
  });
});

describe('ci', () => {
  const hint =
    'Send {"image": "registry.example.com/team/app:1.2.3@sha256:<64 hex>"} or {"repository": "registry.example.com/team/app", "tag": "1.2.3", "digest": "sha256:<64 hex>"} (the digest is optional).';
  it.each([
    { body: { image: 'nginx:1.25' }, expected: event('ci', 'docker.io/library/nginx', '1.25') },
    { body: { image: `ghcr.io/example/hello:1.2.3@${D}` }, expected: event('ci', 'ghcr.io/example/hello', '1.2.3', D) },
    {
      body: { image: 'registry.example.com:5000/team/app:2.0' },
      expected: event('ci', 'registry.example.com:5000/team/app', '2.0'),
    },
    { body: { image: 'localhost:5000/app:dev' }, expected: event('ci', 'localhost:5000/app', 'dev') },
    {
      body: { repository: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/hello', tag: 'v1', digest: D },
      expected: event('ci', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/hello', 'v1', D),
    },
    {
      body: { repository: 'europe-docker.pkg.dev/proj/repo/img', tag: '2026.01.02' },
      expected: event('ci', 'europe-docker.pkg.dev/proj/repo/img', '2026.01.02'),
    },
    {
      body: { repository: 'example/app', tag: 'v1', digest: null },
      expected: event('ci', 'docker.io/example/app', 'v1'),
    },
  ])('$body', ({ body, expected }) => {
    expect(normalizeCiImage(body, ctx)).toEqual({ kind: 'images', events: [expected] });
  });

  it.each([
    { body: { repository: 'example/app', tag: `sha256-${HEX64}.sig` }, reason: 'signature-or-attestation' },
    { body: { image: `example/app:sha256-${HEX64}.att` }, reason: 'signature-or-attestation' },
    { body: { repository: 'example/app', tag: HEX64 }, reason: 'digest-tag' },
  ])('ignores $body ($reason)', ({ body, reason }) => {
    expect(normalizeCiImage(body, ctx)).toMatchObject({ kind: 'ignored', reason });
  });

  it.each([
    { body: {}, message: `ci: repository is missing (expected string); tag is missing (expected string). ${hint}` },
    { body: { image: '' }, message: `ci: image: Too small: expected string to have >=1 characters. ${hint}` },
    {
      body: { image: 'nginx' },
      message: `ci: image "nginx" has no tag; Escalator bumps tags, so name the tag that was pushed (…:1.2.3). ${hint}`,
    },
    {
      body: { image: 'Example/App:1' },
      message: `ci: image: the repository name in "Example/App:1" must be lowercase. ${hint}`,
    },
    {
      body: { image: 'example/app:-x' },
      message: `ci: image: "-x" in "example/app:-x" is not a valid tag (allowed: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}). ${hint}`,
    },
    {
      body: { image: 'example/app:1@sha256:abc' },
      message: `ci: image: "sha256:abc" in "example/app:1@sha256:abc" is not a valid digest (expected algorithm:encoded, e.g. sha256:<64 hex>). ${hint}`,
    },
    {
      body: { repository: 'example/app:1', tag: '1' },
      message: `ci: repository "example/app:1" must be a name only; put the tag in "tag" and the digest in "digest". ${hint}`,
    },
    { body: { repository: 'example/app', tag: '-x' }, message: `ci: tag "-x" is not a valid Docker tag. ${hint}` },
    {
      body: { repository: 'example/app', tag: '1', digest: 'sha256:abc' },
      message: `ci: digest "sha256:abc" is not a valid digest; expected sha256:<64 lowercase hex characters>. ${hint}`,
    },
    {
      body: { repository: 'example/app', tag: '' },
      message: `ci: tag: Too small: expected string to have >=1 characters. ${hint}`,
    },
  ])('rejects $body', ({ body, message }) => {
    expect(normalizeCiImage(body, ctx)).toEqual({ kind: 'invalid', message });
  });
});

describe('eventKey', () => {
  const pinned = event('harbor', 'harbor.example.com/team/app', 'v1', D);
  const unpinned = event('dockerhub', 'docker.io/example/app', 'latest');

  it('is 64 lowercase hex characters, so it is a valid BullMQ job id (no ":")', () => {
    expect(eventKey(pinned)).toMatch(/^[a-f0-9]{64}$/);
    expect(eventKey(unpinned)).toMatch(/^[a-f0-9]{64}$/);
  });

  it('is the same for a redelivered event with a digest, whatever the delivery id and time', () => {
    expect(eventKey({ ...pinned, deliveryId: 'delivery-2', receivedAt: '2026-02-02T00:00:00.000Z' })).toBe(
      eventKey(pinned),
    );
  });

  it('differs by source, repository, tag and digest', () => {
    const keys = [
      pinned,
      { ...pinned, source: 'ci' as const },
      { ...pinned, repository: 'harbor.example.com/team/other' },
      { ...pinned, tag: 'v2' },
      { ...pinned, digest: D2 },
    ].map(eventKey);
    expect(new Set(keys).size).toBe(5);
  });

  it('without a digest, a new delivery of the same tag is a new event (the tag may have moved)', () => {
    expect(eventKey({ ...unpinned, receivedAt: '2026-02-02T00:00:00.000Z' })).toBe(eventKey(unpinned));
    expect(eventKey({ ...unpinned, deliveryId: 'delivery-2' })).not.toBe(eventKey(unpinned));
  });
});

describe('ImagePublished schema', () => {
  const valid = event('distribution', 'registry.example.com:5000/team/app', 'v1', D);
  it('accepts a normalized event', () => {
    expect(ImagePublished.parse(valid)).toEqual(valid);
  });
  it.each([
    { change: { tag: '' }, path: 'tag' },
    { change: { tag: 'a:b' }, path: 'tag' },
    { change: { digest: 'sha256:abc' }, path: 'digest' },
    { change: { registry: 'Registry.Example.com' }, path: 'registry' },
    { change: { repository: 'other.example.com/team/app' }, path: 'repository' },
    { change: { repository: 'registry.example.com:5000/Team/App' }, path: 'repository' },
    { change: { source: 'jfrog' }, path: 'source' },
    { change: { receivedAt: 'yesterday' }, path: 'receivedAt' },
    { change: { deliveryId: '' }, path: 'deliveryId' },
  ])('rejects $change', ({ change, path }) => {
    const result = ImagePublished.safeParse({ ...valid, ...change });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toContain(path);
  });
});
