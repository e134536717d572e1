import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { DeliveryRecord } from '../src/webhooks.js';

/**
 * Validates webhook payloads against `@octokit/webhooks-schemas` (one definition per
 * event and action, e.g. `pull_request$opened`, `push$event`).
 */

const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(require.resolve('@octokit/webhooks-schemas'), 'utf8')) as Record<
  string,
  unknown
>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('uri-template', true);
// Only the definitions: Ajv compiles a schema's root before the first definition is taken from it,
// and this root is a `oneOf` of every event (all 344 definitions, ~4 s of CPU in every test
// process). No check uses the root; each payload is held to its own event's definition.
ajv.addSchema({ $schema: schema.$schema as string, definitions: schema.definitions }, 'webhooks');

/** The example payloads GitHub's community collected, by event name. */
export const examples = JSON.parse(readFileSync(require.resolve('@octokit/webhooks-examples'), 'utf8')) as {
  name: string;
  examples: Record<string, unknown>[];
}[];

const compiled = new Map<string, ValidateFunction>();

export function definitionName(event: string, action: string | null): string {
  // Events without actions (`push`, `status`) have one definition, `<event>$event`.
  return event === 'push' || action === null ? `${event}$event` : `${event}$${action}`;
}

/** Returns problems with a payload; an empty list means it matches GitHub's schema. */
export function validateWebhook(event: string, payload: unknown, action: string | null): string[] {
  const name = definitionName(event, action);
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.getSchema(`webhooks#/definitions/${name}`);
    if (!validate) return [`no webhook schema named ${name}`];
    compiled.set(name, validate);
  }
  if (validate(payload)) return [];
  return (validate.errors ?? [])
    .slice(0, 8)
    .map((e) => `${name} ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Records schema problems of every delivery the simulator makes. */
export class WebhookRecorder {
  readonly failures: string[] = [];
  readonly seen = new Set<string>();

  check(delivery: DeliveryRecord): void {
    if (delivery.redelivery) return;
    this.seen.add(definitionName(delivery.event, delivery.action));
    this.failures.push(...validateWebhook(delivery.event, delivery.request.payload, delivery.action));
  }
}

/** Keys an example object has that ours lacks (at one level), minus keys GitHub only sends sometimes. */
export function missingKeys(example: unknown, ours: unknown, optional: string[] = []): string[] {
  if (!example || typeof example !== 'object' || !ours || typeof ours !== 'object') return [];
  return Object.keys(example).filter((key) => !(key in ours) && !optional.includes(key));
}
