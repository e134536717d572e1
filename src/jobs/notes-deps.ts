import { loadAuthFile } from '../adapters/registry/auth-file.js';
import { RegistryAccess, type RegistryClientOptions } from '../adapters/registry/client.js';
import type { Env } from '../config/env.js';
import { parseRegistryMirrors } from '../config/registry-mirrors.js';
import { ConfigError } from '../observability/errors.js';
import type { Logger } from '../observability/logger.js';
import { registryRequests } from '../observability/metrics.js';
import { webHostOf, type NotesDeps } from './shared/release-notes.js';

/**
 * The registry clients of a worker, with the credentials of `ESCALATOR_REGISTRY_AUTH_FILE`, each
 * for the owners its entry names (a file that cannot be read, or an entry without owners, stops
 * the worker at start, with every problem named; never a secret).
 */
export function createNotesDeps(env: Env, log: Logger, onRequest?: RegistryClientOptions['onRequest']): NotesDeps {
  const auth = loadAuthFile(env.ESCALATOR_REGISTRY_AUTH_FILE);
  if (!auth.ok) throw new ConfigError(`registry credentials: ${auth.problems.join('; ')}`);
  const mirrors = parseRegistryMirrors(env.ESCALATOR_REGISTRY_MIRRORS);
  if (!mirrors.ok) throw new ConfigError(`ESCALATOR_REGISTRY_MIRRORS: ${mirrors.problems.join('; ')}`);
  const registry = new RegistryAccess(auth.entries, {
    log,
    ...(mirrors.mirrors ? { mirrors: mirrors.mirrors } : {}),
    onRequest: (info) => {
      registryRequests.inc({ kind: info.kind, status: String(info.status) });
      onRequest?.(info);
    },
  });
  if (auth.entries.length > 0)
    log.info(
      { hosts: registry.hosts(), entries: auth.entries.length },
      'Registry credentials loaded; each serves the owners its entry names, and events for their images are verified',
    );
  if (mirrors.mirrors)
    log.info(
      { mirrors: Object.fromEntries([...mirrors.mirrors].map(([host, url]) => [host, url.origin])) },
      'Registries are read only through ESCALATOR_REGISTRY_MIRRORS; no other registry host is contacted',
    );
  return {
    registry,
    webHost: webHostOf(env.GITHUB_API_URL),
    ...(env.ESCALATOR_SIGSTORE_TRUSTED_ROOTS ? { trustedRoots: env.ESCALATOR_SIGSTORE_TRUSTED_ROOTS } : {}),
  };
}
