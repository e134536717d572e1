/**
 * The repository configuration's editor settings (`images[].fluxPolicies`,
 * `images[].helmDottedKeys`) as data the planners pass to every edit. Pure.
 */
import { sameRepository } from '../image-ref.js';
import type { EditOptions } from './types.js';

/** What the configuration says about how images are written, for every image. */
export interface EditSettings {
  /** Flux policy (`<namespace>:<name>`) → the image it sets. */
  fluxPolicies: Record<string, string>;
  /** Images whose charts read literal dotted keys (`image.tag`) as they are. */
  helmDottedKeys: string[];
}

/** The settings of `images[]` entries (only the fields read here). */
export function editSettingsFrom(
  images: ReadonlyArray<{ name: string; fluxPolicies?: readonly string[]; helmDottedKeys?: boolean }>,
): EditSettings {
  const settings: EditSettings = { fluxPolicies: {}, helmDottedKeys: [] };
  for (const image of images) {
    for (const policy of image.fluxPolicies ?? []) settings.fluxPolicies[policy] ??= image.name;
    if (image.helmDottedKeys === true) settings.helmDottedKeys.push(image.name);
  }
  return settings;
}

/** The edit options the settings give an edit of `repository`. */
export function editOptionsFor(
  settings: EditSettings | undefined,
  repository: string,
): Pick<EditOptions, 'fluxPolicies' | 'dottedKeys'> {
  if (!settings) return {};
  const options: Pick<EditOptions, 'fluxPolicies' | 'dottedKeys'> = {};
  if (Object.keys(settings.fluxPolicies).length > 0) options.fluxPolicies = settings.fluxPolicies;
  if (settings.helmDottedKeys.some((name) => sameRepository(name, repository))) options.dottedKeys = true;
  return options;
}
