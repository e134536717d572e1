import { z } from 'zod';
import type { IgnoreReason, NormalizeContext, SourceResult } from '../image-event.js';
import { describeIssues, ignore, imageOutcome, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Azure Container Registry webhooks. Only `push` announces an image; `chart_push` is a Helm
 * chart, `delete`/`chart_delete` remove things, `quarantine` holds an image back for scanning
 * and `ping` is the portal's test. The registry host is `request.host` (`<name>.azurecr.io`).
 */

const Head = z.object({ action: z.string() });
const PushPayload = z.object({
  action: z.literal('push'),
  target: z.object({
    repository: z.string().min(1),
    tag: z.string().nullish(),
    digest: z.string().nullish(),
  }),
  request: z.object({ host: z.string().nullish() }).nullish(),
});

const OTHER_ACTIONS: Readonly<Record<string, IgnoreReason>> = {
  chart_push: 'not-a-container',
  delete: 'delete',
  chart_delete: 'delete',
};

const HINT = 'Send the body of an Azure Container Registry webhook (action push) unchanged.';

/** Normalizes an Azure Container Registry webhook body. */
export function normalizeAcr(payload: unknown, ctx: NormalizeContext): SourceResult<'acr'> {
  const head = Head.safeParse(payload);
  if (!head.success) return { kind: 'invalid', message: describeIssues('acr', payload, head.error, HINT) };
  if (head.data.action !== 'push')
    return single(ignore(OTHER_ACTIONS[head.data.action] ?? 'not-a-push', `action "${head.data.action}"`));
  const parsed = PushPayload.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('acr', payload, parsed.error, HINT) };
  const { target, request } = parsed.data;
  return single(
    imageOutcome(
      {
        source: 'acr',
        registry: request?.host ?? undefined,
        path: target.repository,
        tag: target.tag,
        digest: target.digest,
        fields: { registry: 'request.host', path: 'target.repository', digest: 'target.digest' },
      },
      ctx,
    ),
  );
}

/** Azure Container Registry: the webhook's custom headers carry the token. */
export const acr = {
  source: 'acr',
  auth: 'bearer',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeAcr,
  docs: { name: 'Azure Container Registry', section: 'Azure Container Registry (ACR)', digest: true },
} as const satisfies RegistryDescriptor;
