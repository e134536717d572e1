import { z } from 'zod';
import type { NormalizeContext, SourceResult } from '../image-event.js';
import { describeIssues, imageOutcome, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Docker Hub repository webhooks. Docker Hub has one trigger (a push) and sends no action, no
 * event header and no digest: only `push_data.tag` and `repository.repo_name`.
 */

const Payload = z.object({
  push_data: z.object({ tag: z.string() }),
  repository: z.object({ repo_name: z.string().min(1) }),
});

const HINT = 'Send the body of a Docker Hub webhook unchanged (it needs push_data.tag and repository.repo_name).';

/** Normalizes a Docker Hub webhook body. */
export function normalizeDockerhub(payload: unknown, ctx: NormalizeContext): SourceResult<'dockerhub'> {
  const parsed = Payload.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('dockerhub', payload, parsed.error, HINT) };
  return single(
    imageOutcome(
      {
        source: 'dockerhub',
        registry: 'docker.io',
        path: parsed.data.repository.repo_name,
        tag: parsed.data.push_data.tag,
        fields: { registry: 'registry', path: 'repository.repo_name', digest: 'digest' },
      },
      ctx,
    ),
  );
}

/** Docker Hub: its webhooks cannot carry a header, so the token is in the path. */
export const dockerhub = {
  source: 'dockerhub',
  auth: 'path-token',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeDockerhub,
  docs: { name: 'Docker Hub', section: 'Docker Hub', digest: false },
} as const satisfies RegistryDescriptor;
