import { createHash } from 'node:crypto';

/**
 * Credentials that sit outside Secrets: a password in a URL (`postgres://app:hunter2@db:5432`),
 * an env var literal named like a secret (`- {name: DB_PASSWORD, value: hunter2}`), a ConfigMap key
 * named like one. Masked as Secret values are — `(redacted)` in the diff, their sizes kept aside so
 * a change still shows — in rendered objects and in the values view.
 */

/** Keys (Helm values, env var and ConfigMap key names) that by their name hold credentials. */
export const SECRET_KEY_NAME = /(pass(word|wd)?|secret|token|api[-_]?key|private[-_]?key|credential|auth)/i;

/** `scheme://user:password@`: the password part. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)([^\s/?#@]+)@/gi;

export const MASKED = '(redacted)';

/** A masked value: its size and digest, never the bytes. */
export interface MaskedValue {
  bytes: number;
  digest: string;
}

function digest(text: string): MaskedValue {
  return { bytes: Buffer.byteLength(text, 'utf8'), digest: createHash('sha256').update(text).digest('hex') };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Values too plain to be a credential (flags, numbers, empty): kept as they are. */
function plain(value: string): boolean {
  return /^(|true|false|yes|no|on|off|\d+)$/i.test(value.trim());
}

/** A string with the passwords of its URLs masked; each password recorded under `where`. */
export function maskUrlCredentials(text: string, where: string, into: Map<string, MaskedValue>): string {
  let index = 0;
  return text.replace(URL_CREDENTIAL, (_, prefix: string, password: string) => {
    into.set(index === 0 ? `${where} (URL password)` : `${where} (URL password ${index + 1})`, digest(password));
    index++;
    return `${prefix}${MASKED}@`;
  });
}

/** Passwords of URLs in a string, for scrubbing error messages. */
export function urlPasswords(text: string): string[] {
  return [...text.matchAll(URL_CREDENTIAL)].map((match) => match[2] as string);
}

/**
 * Mask in place, walking a rendered object's body: URL passwords in every string, env var
 * literals named like secrets, and (for a ConfigMap) data keys named like secrets. Returns what
 * was masked, by a readable path.
 */
export function maskObjectBody(body: Record<string, unknown>, isConfigMap: boolean): Map<string, MaskedValue> {
  const masked = new Map<string, MaskedValue>();
  const walk = (value: unknown, path: string, parentKey: string): unknown => {
    if (typeof value === 'string') return maskUrlCredentials(value, path, masked);
    if (Array.isArray(value))
      return value.map((item, index) => {
        // env: [{name: DB_PASSWORD, value: …}]
        if (parentKey === 'env' && isRecord(item) && typeof item.name === 'string') {
          const where = `${path}[${item.name}]`;
          if (typeof item.value === 'string' && SECRET_KEY_NAME.test(item.name) && !plain(item.value)) {
            masked.set(`${where}.value`, digest(item.value));
            return { ...item, value: MASKED };
          }
          return walk(item, where, '');
        }
        return walk(item, `${path}[${index}]`, '');
      });
    if (isRecord(value))
      for (const [key, child] of Object.entries(value)) value[key] = walk(child, path ? `${path}.${key}` : key, key);
    return value;
  };
  walk(body, '', '');
  if (isConfigMap && isRecord(body.data))
    for (const [key, value] of Object.entries(body.data)) {
      if (typeof value !== 'string' || !SECRET_KEY_NAME.test(key) || plain(value) || value === MASKED) continue;
      masked.set(`data.${key}`, digest(value));
      body.data[key] = MASKED;
    }
  return masked;
}
