import type { IncomingMessage, ServerResponse } from 'node:http';
import { metricsRegistry } from '../observability/metrics.js';
import type { Handler } from './server.js';

/** `GET /metrics` in Prometheus text format; `refresh` updates scrape-time gauges first. */
export function metricsRoute(options: { refresh?: () => Promise<void> } = {}): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return false;
    await options.refresh?.().catch(() => undefined);
    const text = await metricsRegistry.metrics();
    res.writeHead(200, { 'content-type': metricsRegistry.contentType });
    res.end(text);
    return true;
  };
}
