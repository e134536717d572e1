import { z } from 'zod';
import type { NormalizeContext, SourceResult } from '../image-event.js';
import { describeIssues, ignore, imageOutcome, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Amazon ECR "ECR Image Action" events from EventBridge, delivered by an API destination (the
 * whole event, no input transformer). Successful `PUSH` actions announce an image; deletes,
 * failures and other ECR detail types (scans, pull-through cache, replication) do not.
 */

const Head = z.object({ 'detail-type': z.string() });
const ImageAction = z.object({
  'detail-type': z.literal('ECR Image Action'),
  account: z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-west-1'),
  detail: z.object({
    'action-type': z.string(),
    result: z.string(),
    'repository-name': z.string().min(1),
    'image-digest': z.string().nullish(),
    'image-tag': z.string().nullish(),
  }),
});

const HINT =
  'Send the whole EventBridge event (detail-type "ECR Image Action", source aws.ecr) unchanged, without an input transformer.';

/** ECR's registry host for an account and region; China regions live under amazonaws.com.cn. */
function ecrHost(account: string, region: string): string {
  return `${account}.dkr.ecr.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** Normalizes an Amazon ECR EventBridge event. */
export function normalizeEcr(payload: unknown, ctx: NormalizeContext): SourceResult<'ecr'> {
  const head = Head.safeParse(payload);
  if (!head.success) return { kind: 'invalid', message: describeIssues('ecr', payload, head.error, HINT) };
  if (head.data['detail-type'] !== 'ECR Image Action')
    return single(ignore('not-a-push', `detail-type "${head.data['detail-type']}"`));
  const parsed = ImageAction.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('ecr', payload, parsed.error, HINT) };
  const { account, region, detail } = parsed.data;
  const action = detail['action-type'];
  if (action === 'DELETE') return single(ignore('delete', `action-type "${action}"`));
  if (action !== 'PUSH') return single(ignore('not-a-push', `action-type "${action}"`));
  if (detail.result !== 'SUCCESS') return single(ignore('not-a-push', `push with result "${detail.result}"`));
  return single(
    imageOutcome(
      {
        source: 'ecr',
        registry: ecrHost(account, region),
        path: detail['repository-name'],
        tag: detail['image-tag'],
        digest: detail['image-digest'],
        fields: { registry: 'account/region', path: 'detail.repository-name', digest: 'detail.image-digest' },
      },
      ctx,
    ),
  );
}

/** Amazon ECR through an EventBridge API destination, whose connection sends the token as a header. */
export const ecr = {
  source: 'ecr',
  auth: 'bearer',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeEcr,
  docs: {
    name: 'Amazon ECR',
    section: 'Amazon ECR (through EventBridge)',
    route: '`POST /registry/ecr` (EventBridge API destination)',
    digest: true,
  },
} as const satisfies RegistryDescriptor;
