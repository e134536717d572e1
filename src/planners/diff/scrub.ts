import { isKustomizationPath } from '../kustomize/index.js';
import { parseYamlDocuments } from '../yaml-parse.js';
import { secretBytes } from './normalize.js';
import { groupOf } from './manifest.js';

/**
 * Secret values must not reach a comment, a check run, a log or an error message. Renderers echo
 * input in their errors (a YAML excerpt, a line of an env file), so every error text is scrubbed of
 * every secret value we can find for the target: rendered Secrets, Secrets in the source files,
 * `secretGenerator` literals, env files and files, and secret-looking keys of Helm values.
 */

/** Values shorter than this are not scrubbed: replacing "a" everywhere would destroy the message. */
const MIN_SECRET_LENGTH = 4;

import { SECRET_KEY_NAME, urlPasswords } from './mask.js';

export { SECRET_KEY_NAME };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function addValue(into: Set<string>, value: string): void {
  for (const candidate of [value, ...value.split(/\r?\n/)]) {
    const trimmed = candidate.trim();
    if (trimmed.length < MIN_SECRET_LENGTH) continue;
    into.add(trimmed);
    into.add(Buffer.from(trimmed, 'utf8').toString('base64'));
    const escaped = JSON.stringify(trimmed).slice(1, -1);
    if (escaped !== trimmed) into.add(escaped);
  }
  if (value.length >= MIN_SECRET_LENGTH) into.add(Buffer.from(value, 'utf8').toString('base64'));
}

/** Secret values of Secret objects in parsed YAML bodies. */
export function secretStringsFromObjects(
  bodies: Array<Record<string, unknown>>,
  into = new Set<string>(),
): Set<string> {
  for (const body of bodies) {
    if (typeof body.apiVersion !== 'string' || groupOf(body.apiVersion) !== '' || body.kind !== 'Secret') continue;
    if (isRecord(body.data))
      for (const raw of Object.values(body.data))
        if (typeof raw === 'string' && raw.length >= MIN_SECRET_LENGTH) into.add(raw.replace(/\s+/g, ''));
    for (const bytes of secretBytes(body).values()) addValue(into, bytes.toString('utf8'));
  }
  return into;
}

function collectValues(value: unknown, into: Set<string>, underSecretKey: boolean): void {
  if (typeof value === 'string' || typeof value === 'number') {
    if (underSecretKey) addValue(into, String(value));
  } else if (Array.isArray(value)) for (const item of value) collectValues(item, into, underSecretKey);
  else if (isRecord(value))
    for (const [key, child] of Object.entries(value))
      collectValues(child, into, underSecretKey || SECRET_KEY_NAME.test(key));
}

/** Credentials outside Secrets that the comment masks (src/planners/diff/mask.ts): URL passwords, env literals named like secrets. */
function collectMaskable(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') for (const password of urlPasswords(value)) addValue(into, password);
  else if (Array.isArray(value)) for (const item of value) collectMaskable(item, into);
  else if (isRecord(value)) {
    if (typeof value.name === 'string' && typeof value.value === 'string' && SECRET_KEY_NAME.test(value.name))
      addValue(into, value.value);
    for (const child of Object.values(value)) collectMaskable(child, into);
  }
}

function parseYamlValues(text: string): unknown[] {
  try {
    return parseYamlDocuments(text, { prettyErrors: false })
      .map((document) =>
        'errors' in document && document.errors.length === 0 ? document.toJS({ maxAliasCount: 100 }) : undefined,
      )
      .filter((value) => value !== undefined);
  } catch {
    return [];
  }
}

/**
 * Secret values in a target's source files. `read` returns a file's text or undefined; `files` are
 * the target's inputs. Looks at kustomization `secretGenerator` entries (literals, env files,
 * files), Secret manifests, and secret-looking keys of any other YAML (Helm values).
 */
export function secretStringsFromSources(
  files: string[],
  read: (path: string) => string | undefined,
  into = new Set<string>(),
): Set<string> {
  for (const path of files) {
    if (!/\.(ya?ml)$|(^|\/)Kustomization$/.test(path)) continue;
    const text = read(path);
    if (text === undefined) continue;
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    for (const document of parseYamlValues(text)) {
      if (!isRecord(document)) continue;
      secretStringsFromObjects([document], into);
      collectMaskable(document, into);
      // Values files (no apiVersion/kind, not a kustomization): keys named like credentials.
      const isObject = typeof document.apiVersion === 'string' && typeof document.kind === 'string';
      const isKustomization = isKustomizationPath(path);
      if (!isObject && !isKustomization) collectValues(document, into, false);
      const generators = document.secretGenerator;
      if (!Array.isArray(generators)) continue;
      for (const generator of generators) {
        if (!isRecord(generator)) continue;
        for (const literal of Array.isArray(generator.literals) ? generator.literals : []) {
          if (typeof literal === 'string' && literal.includes('='))
            addValue(into, literal.slice(literal.indexOf('=') + 1));
        }
        const envs = [
          ...(Array.isArray(generator.envs) ? generator.envs : []),
          ...(typeof generator.env === 'string' ? [generator.env] : []),
        ];
        for (const env of envs) {
          const content = typeof env === 'string' ? read(joinRelative(dir, env)) : undefined;
          for (const line of content?.split(/\r?\n/) ?? [])
            if (line.includes('=') && !line.trimStart().startsWith('#'))
              addValue(into, line.slice(line.indexOf('=') + 1));
        }
        for (const file of Array.isArray(generator.files) ? generator.files : []) {
          if (typeof file !== 'string') continue;
          const content = read(joinRelative(dir, file.includes('=') ? file.slice(file.indexOf('=') + 1) : file));
          if (content !== undefined) addValue(into, content);
        }
      }
    }
  }
  return into;
}

function joinRelative(dir: string, relative: string): string {
  const parts = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

/** Replace every known secret value in a text; longest first so a value's prefix never survives. */
export function scrubText(text: string, secrets: Iterable<string>): string {
  const sorted = [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  let result = text;
  for (const secret of sorted) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
  return result;
}
