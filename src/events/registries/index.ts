import type { RegistryDescriptor } from './descriptor.js';
import { acr } from './acr.js';
import { distribution } from './distribution.js';
import { dockerhub } from './dockerhub.js';
import { ecr } from './ecr.js';
import { gar } from './gar.js';
import { github } from './github.js';
import { harbor } from './harbor.js';
import { quay } from './quay.js';

/**
 * Every container registry Escalator takes webhooks from, one descriptor each
 * (`./descriptor.ts`). Whatever handles registries iterates this table instead of naming them:
 * the routes and the credentials (`src/intake/`), the event source enum (`../image-published.ts`),
 * `escalator token`, the fixture, route and fuzz tests, and the summary table of
 * docs/registries.md (`npm run schema`). The order is the order of the docs and of every list
 * shown to operators.
 *
 * Adding a registry:
 * 1. `src/events/registries/<source>.ts`: its normalizer and descriptor (pure, like this folder)
 * 2. one line below
 * 3. `test/fixtures/registry/<source>/`: real payloads, a README saying where each comes from,
 *    and `cases.ts` (what each payload normalizes to; which ones the fuzzers send)
 * 4. docs/registries.md: a section headed `docs.section`, then `npm run schema` for the table
 * A new way to authenticate is intake code (`RegistryAuth`), not a registry.
 */
export const registries = [
  github,
  dockerhub,
  quay,
  harbor,
  acr,
  ecr,
  gar,
  distribution,
] as const satisfies readonly RegistryDescriptor[];

/** A registry's source name: `POST /registry/<source>`. */
export type RegistrySource = (typeof registries)[number]['source'];

/** The table's descriptor of `source`, or undefined when no registry has that name. */
export function registryOf(source: string): (typeof registries)[number] | undefined {
  return registries.find((registry) => registry.source === source);
}

/** Whether `name` is a registry source of the table (for routing `/registry/<name>`). */
export function isRegistrySource(name: string): name is RegistrySource {
  return registryOf(name) !== undefined;
}

/** The source names in table order. */
export const registrySources: readonly RegistrySource[] = registries.map((registry) => registry.source);
