import type { Normalizer } from './image-published.js';
import { registries, type RegistrySource } from './registries/index.js';

/**
 * Registry intake's normalizers by source name, from the registry table
 * (`./registries/index.ts`). The CI API has its own body shape and uses {@link normalizeCiImage}.
 */
export const normalizers: Readonly<Record<RegistrySource, Normalizer>> = Object.fromEntries(
  registries.map((registry) => [registry.source, registry.normalize]),
) as Record<RegistrySource, Normalizer>;

export { isRegistrySource, registries, registryOf, registrySources } from './registries/index.js';
export type { RegistrySource } from './registries/index.js';
export { JSON_CONTENT_TYPES } from './registries/descriptor.js';
export type { RegistryAuth, RegistryDescriptor, RegistryDocs } from './registries/descriptor.js';
export { eventKey, ImagePublished, isDigest, Source } from './image-published.js';
export type { Ignored, IgnoreReason, NormalizeContext, NormalizeResult, Normalizer } from './image-published.js';
export { normalizeCiImage } from './ci.js';
export { normalizeAcr } from './registries/acr.js';
export { normalizeDistribution } from './registries/distribution.js';
export { normalizeDockerhub } from './registries/dockerhub.js';
export { normalizeEcr } from './registries/ecr.js';
export { normalizeGar } from './registries/gar.js';
export { normalizeGithub } from './registries/github.js';
export { normalizeHarbor } from './registries/harbor.js';
export { normalizeQuay } from './registries/quay.js';
