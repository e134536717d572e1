import type { Normalizer, Source } from './image-published.js';
import { normalizeAcr } from './acr.js';
import { normalizeDistribution } from './distribution.js';
import { normalizeDockerhub } from './dockerhub.js';
import { normalizeEcr } from './ecr.js';
import { normalizeGar } from './gar.js';
import { normalizeGithub } from './github.js';
import { normalizeHarbor } from './harbor.js';
import { normalizeQuay } from './quay.js';

/**
 * Registry intake's normalizers by source name: `POST /registry/<source>` looks its normalizer
 * up here. The CI API has its own body shape and uses {@link normalizeCiImage}.
 */
export const normalizers: Readonly<Record<Exclude<Source, 'ci'>, Normalizer>> = {
  github: normalizeGithub,
  dockerhub: normalizeDockerhub,
  harbor: normalizeHarbor,
  quay: normalizeQuay,
  acr: normalizeAcr,
  gar: normalizeGar,
  ecr: normalizeEcr,
  distribution: normalizeDistribution,
};

/** Whether `name` is a registry source with a normalizer (for routing `/registry/<name>`). */
export function isRegistrySource(name: string): name is Exclude<Source, 'ci'> {
  return Object.hasOwn(normalizers, name);
}

export { eventKey, ImagePublished, isDigest, Source } from './image-published.js';
export type { Ignored, IgnoreReason, NormalizeContext, NormalizeResult, Normalizer } from './image-published.js';
export { normalizeCiImage } from './ci.js';
export { normalizeAcr, normalizeDistribution, normalizeDockerhub, normalizeEcr, normalizeGar, normalizeGithub, normalizeHarbor, normalizeQuay };
