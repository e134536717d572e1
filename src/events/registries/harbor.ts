import { z } from 'zod';
import type { IgnoreReason, NormalizeContext, SourceResult } from '../image-event.js';
import { combine, describeIssues, hostOf, ignore, imageOutcome, single } from '../outcome.js';
import type { Outcome } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Harbor project webhooks, in both payload formats: "Default" (`type: PUSH_ARTIFACT`,
 * `event_data`) and "CloudEvents" (`specversion`, `type: harbor.artifact.pushed`, `data`).
 * The data is the same; Harbor's CloudEvents formatter wraps the default `event_data` as `data`.
 * The registry host is taken from each resource's `resource_url`.
 */

const EventData = z.object({
  resources: z.array(
    z.object({
      tag: z.string().nullish(),
      digest: z.string().nullish(),
      resource_url: z.string().nullish(),
    }),
  ),
  repository: z.object({ repo_full_name: z.string().min(1) }),
});

const Head = z.object({ type: z.string() });
const DefaultPayload = z.object({ type: z.string(), event_data: EventData });
const CloudEventPayload = z.object({ specversion: z.string(), type: z.string(), data: EventData });

const HINT = 'Send the body of a Harbor webhook (payload format Default or CloudEvents) unchanged.';

/** What each non-push event type means to us; anything not listed is `not-a-push`. */
const OTHER_TYPES: Readonly<Record<string, IgnoreReason>> = {
  PULL_ARTIFACT: 'pull',
  DELETE_ARTIFACT: 'delete',
  UPLOAD_CHART: 'not-a-container',
  DOWNLOAD_CHART: 'pull',
  DELETE_CHART: 'delete',
  'harbor.artifact.pulled': 'pull',
  'harbor.artifact.deleted': 'delete',
};

/** Normalizes a Harbor webhook body (Default or CloudEvents format). */
export function normalizeHarbor(payload: unknown, ctx: NormalizeContext): SourceResult<'harbor'> {
  const head = Head.safeParse(payload);
  if (!head.success) return { kind: 'invalid', message: describeIssues('harbor', payload, head.error, HINT) };
  const cloudEvents = typeof payload === 'object' && payload !== null && 'specversion' in payload;
  const type = head.data.type;
  if (type !== 'PUSH_ARTIFACT' && type !== 'harbor.artifact.pushed') {
    return single(ignore(OTHER_TYPES[type] ?? 'not-a-push', `event type "${type}"`));
  }
  const parsed = cloudEvents ? CloudEventPayload.safeParse(payload) : DefaultPayload.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('harbor', payload, parsed.error, HINT) };
  const data = 'data' in parsed.data ? parsed.data.data : parsed.data.event_data;
  const prefix = cloudEvents ? 'data' : 'event_data';
  const outcomes: Outcome<'harbor'>[] = data.resources.map((resource, i) =>
    imageOutcome(
      {
        source: 'harbor',
        registry: resource.resource_url ? hostOf(resource.resource_url) : undefined,
        path: data.repository.repo_full_name,
        tag: resource.tag,
        digest: resource.digest,
        fields: {
          registry: `${prefix}.resources[${i}].resource_url`,
          path: `${prefix}.repository.repo_full_name`,
          digest: `${prefix}.resources[${i}].digest`,
        },
      },
      ctx,
    ),
  );
  return combine(outcomes, { reason: 'untagged', detail: `${prefix}.resources is empty` });
}

/** Harbor: the project webhook's Auth Header carries the token. */
export const harbor = {
  source: 'harbor',
  auth: 'bearer',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeHarbor,
  docs: { name: 'Harbor', section: 'Harbor', digest: true },
} as const satisfies RegistryDescriptor;
