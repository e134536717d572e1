import { createHmac, randomUUID } from 'node:crypto';
import type { SandboxState } from './state.js';

/** One delivery attempt, as `GET /app/hook/deliveries/{id}` reports it. */
export interface DeliveryRecord {
  id: number;
  guid: string;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  deliveredAt: Date;
  redelivery: boolean;
  /** Seconds the receiver took to answer. */
  duration: number;
  status: string;
  statusCode: number;
  url: string | null;
  request: { headers: Record<string, string>; payload: Record<string, unknown> };
  response: { headers: Record<string, string>; payload: string | null };
}

/** GitHub gives a receiver 10 seconds before it calls the delivery a timeout. */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Signs and posts webhooks to the App's URL one at a time, in the order the events happened,
 * and keeps every attempt in a delivery log (newest first) for the deliveries API.
 */
export class WebhookDispatcher {
  readonly deliveries: DeliveryRecord[] = [];
  /** Internal errors while building or sending a delivery (not receiver failures, which are logged as deliveries). */
  readonly errors: Error[] = [];
  private tail: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(delivery: DeliveryRecord) => void>();

  constructor(
    private readonly state: SandboxState,
    private readonly hookId: number,
    private readonly enterpriseHost: string,
  ) {}

  /** Queues one event; `payload` already carries `action`, `repository`, `sender`, `installation`. */
  send(event: string, payload: Record<string, unknown>): void {
    this.enqueue(event, payload, randomUUID(), false);
  }

  /** Posts a logged delivery again with the same GUID, as `POST …/attempts` does. */
  redeliver(id: number): boolean {
    const original = this.deliveries.find((delivery) => delivery.id === id);
    if (!original) return false;
    this.enqueue(original.event, original.request.payload, original.guid, true);
    return true;
  }

  /** Resolves once every queued delivery has been attempted. */
  async idle(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }

  /** Calls `listener` after each attempt (tests validate payloads here). Returns an unsubscribe function. */
  onDelivery(listener: (delivery: DeliveryRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private enqueue(event: string, payload: Record<string, unknown>, guid: string, redelivery: boolean): void {
    // A failure inside one delivery must not stop the ones queued behind it; it is kept for inspection.
    this.tail = this.tail
      .then(() => this.deliver(event, payload, guid, redelivery))
      .catch((error: unknown) => {
        this.errors.push(error instanceof Error ? error : new Error(String(error)));
      });
  }

  private async deliver(
    event: string,
    payload: Record<string, unknown>,
    guid: string,
    redelivery: boolean,
  ): Promise<void> {
    const app = this.state.requireApp();
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = {
      accept: '*/*',
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/sandbox',
      'x-github-delivery': guid,
      'x-github-event': event,
      'x-github-hook-id': String(this.hookId),
      'x-github-hook-installation-target-id': String(app.id),
      'x-github-hook-installation-target-type': 'integration',
      'x-github-enterprise-host': this.enterpriseHost,
      'x-github-enterprise-version': '3.17.0',
      'x-hub-signature': `sha1=${createHmac('sha1', app.webhookSecret).update(body).digest('hex')}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', app.webhookSecret).update(body).digest('hex')}`,
    };
    const started = Date.now();
    const record: DeliveryRecord = {
      id: this.state.nextId(),
      guid,
      event,
      action: typeof payload.action === 'string' ? payload.action : null,
      installationId: idOf(payload.installation),
      repositoryId: idOf(payload.repository),
      deliveredAt: this.state.clock(),
      redelivery,
      duration: 0,
      status: 'OK',
      statusCode: 0,
      url: app.webhookUrl,
      request: { headers, payload },
      response: { headers: {}, payload: null },
    };
    if (!app.webhookUrl) {
      record.status = 'No webhook URL configured';
    } else {
      await post(app.webhookUrl, headers, body, record);
    }
    record.duration = (Date.now() - started) / 1000;
    this.deliveries.unshift(record);
    for (const listener of this.listeners) listener(record);
  }
}

async function post(url: string, headers: Record<string, string>, body: string, record: DeliveryRecord): Promise<void> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    record.statusCode = response.status;
    record.response.headers = Object.fromEntries(response.headers.entries());
    record.response.payload = await response.text();
    record.status = response.ok ? 'OK' : `Invalid HTTP Response: ${response.status}`;
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    record.status = timedOut
      ? 'timed out'
      : `failed to connect to host: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function idOf(value: unknown): number | null {
  if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'number') {
    return (value as { id: number }).id;
  }
  return null;
}
