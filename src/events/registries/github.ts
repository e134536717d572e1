import { z } from 'zod';
import {
  isSourceUrl,
  REVISION_PATTERN,
  withOriginOf,
  type NormalizeContext,
  type SourceResult,
} from '../image-event.js';
import { describeIssues, ignore, imageOutcome, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * GitHub Packages: the `registry_package` event (what a GitHub App receives) and the `package`
 * event (repository and organization webhooks). Both carry the same package object under a
 * different key. GitHub sends one event per pushed manifest: for a multi-platform image the
 * per-platform manifests arrive untagged and the index arrives with the tag.
 */

const GHCR = 'ghcr.io';
/** `updated` is sent when a tag moves onto an existing version, which is a push for us. */
const PUSH_ACTIONS = new Set(['published', 'updated']);

const PackageVersion = z.object({
  container_metadata: z
    .object({
      tag: z.object({ name: z.string().nullish(), digest: z.string().nullish() }).nullish(),
      // The image's org.opencontainers.image.source and .revision labels, as GitHub reads them ("" when absent).
      labels: z.object({ source: z.string().nullish(), revision: z.string().nullish() }).nullish(),
    })
    .nullish(),
});

const Package = z.object({
  name: z.string().min(1),
  package_type: z.string(),
  owner: z.object({ login: z.string().min(1) }),
  package_version: PackageVersion,
  registry: z.object({ type: z.string().nullish() }).nullish(),
});

const Payload = z.object({ action: z.string() });
const RegistryPackagePayload = z.object({ action: z.string(), registry_package: Package });
const PackagePayload = z.object({ action: z.string(), package: Package });

const HINT = 'Send the body of a GitHub `registry_package` or `package` webhook delivery unchanged.';

function isContainer(pkg: z.infer<typeof Package>): boolean {
  return pkg.package_type.toLowerCase() === 'container' || pkg.registry?.type?.toLowerCase() === 'container';
}

/** Normalizes a GitHub `registry_package` or `package` webhook body. */
export function normalizeGithub(payload: unknown, ctx: NormalizeContext): SourceResult<'github'> {
  const head = Payload.safeParse(payload);
  if (!head.success) return { kind: 'invalid', message: describeIssues('github', payload, head.error, HINT) };
  const body = payload as Record<string, unknown>;
  const key = 'registry_package' in body ? 'registry_package' : 'package' in body ? 'package' : undefined;
  if (key === undefined) {
    return { kind: 'invalid', message: `github: registry_package is missing (and so is package). ${HINT}` };
  }
  if (!PUSH_ACTIONS.has(head.data.action)) return single(ignore('not-a-push', `${key} action "${head.data.action}"`));
  const parsed = (key === 'registry_package' ? RegistryPackagePayload : PackagePayload).safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('github', payload, parsed.error, HINT) };
  const pkg = 'registry_package' in parsed.data ? parsed.data.registry_package : parsed.data.package;
  if (!isContainer(pkg)) {
    const legacy =
      pkg.package_type.toLowerCase() === 'docker'
        ? ' (the retired docker.pkg.github.com registry; push to ghcr.io instead)'
        : '';
    return single(ignore('not-a-container', `${key}.package_type "${pkg.package_type}"${legacy}`));
  }
  const tag = pkg.package_version.container_metadata?.tag;
  const result = single<'github'>(
    imageOutcome(
      {
        source: 'github',
        registry: GHCR,
        // ghcr.io names are lowercase; GitHub keeps the owner's display case in `login`.
        path: `${pkg.owner.login}/${pkg.name}`.toLowerCase(),
        tag: tag?.name,
        digest: tag?.digest,
        fields: {
          registry: 'registry',
          path: `${key}.owner.login/${key}.name`,
          digest: `${key}.package_version.container_metadata.tag.digest`,
        },
      },
      ctx,
    ),
  );
  return withLabels(result, pkg.package_version.container_metadata?.labels);
}

/**
 * The source repository and revision GitHub read from the image's labels, when they are there and
 * well formed (GitHub sends "" for absent ones): pull requests show the changes between versions.
 */
function withLabels(
  result: SourceResult<'github'>,
  labels: { source?: string | null; revision?: string | null } | null | undefined,
): SourceResult<'github'> {
  const source = labels?.source && isSourceUrl(labels.source) ? labels.source : undefined;
  const revision = labels?.revision && REVISION_PATTERN.test(labels.revision) ? labels.revision : undefined;
  if (result.kind !== 'images' || (!source && !revision)) return result;
  return { ...result, events: withOriginOf(result.events, { source, revision }) };
}

/** GitHub Packages (ghcr.io): `registry_package`/`package` payloads forwarded to `/registry/github` with a token; the App's own deliveries reach `src/intake/github-app.ts`. */
export const github = {
  source: 'github',
  auth: 'bearer',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeGithub,
  docs: {
    name: 'GitHub Container Registry',
    section: 'GitHub Container Registry (ghcr.io)',
    // The App's own signed deliveries are the way in; /registry/github forwards them from elsewhere.
    route: "none: the App's own `registry_package` events",
    authentication: "GitHub's webhook signature (`WEBHOOK_SECRET`)",
    digest: true,
  },
} as const satisfies RegistryDescriptor;
