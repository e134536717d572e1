import { loadAuthFile } from '../../adapters/registry/auth-file.js';
import { RegistryClient, type RegistryClientOptions } from '../../adapters/registry/client.js';
import type { Env } from '../../config/env.js';
import { ConfigError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';
import { registryRequests } from '../../observability/metrics.js';
import { webHostOf, type NotesDeps } from './release-notes.js';

/**
 * The registry client of a worker, with the credentials of `ESCALATOR_REGISTRY_AUTH_FILE` (a file
 * that cannot be read stops the worker at start, with every problem named; never a secret).
 */
export function createNotesDeps(env: Env, log: Logger, onRequest?: RegistryClientOptions['onRequest']): NotesDeps {
  const auth = loadAuthFile(env.ESCALATOR_REGISTRY_AUTH_FILE);
  if (!auth.ok) throw new ConfigError(`registry credentials: ${auth.problems.join('; ')}`);
  if (auth.credentials.size > 0)
    log.info(
      { hosts: [...auth.credentials.keys()] },
      'Registry credentials loaded; events for these hosts are verified',
    );
  return {
    registry: new RegistryClient({
      credentials: auth.credentials,
      log,
      onRequest: (info) => {
        registryRequests.inc({ kind: info.kind, status: String(info.status) });
        onRequest?.(info);
      },
    }),
    webHost: webHostOf(env.GITHUB_API_URL),
  };
}
