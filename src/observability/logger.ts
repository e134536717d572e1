import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Paths that may carry secrets anywhere in a log record. pino replaces them with "[redacted]"
 * before the record is serialized, so no code path can leak them by accident.
 */
export const redactPaths = [
  'privateKey',
  'secret',
  'token',
  'password',
  '*.privateKey',
  '*.secret',
  '*.token',
  '*.password',
  'env.PRIVATE_KEY',
  'env.WEBHOOK_SECRET',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-hub-signature"]',
  'req.headers["x-hub-signature-256"]',
  'headers.authorization',
  'headers["x-hub-signature-256"]',
];

export type { Logger };

/**
 * A request path as logs may hold it: no query string (senders put tokens there too), and no
 * path token — Docker Hub and Quay cannot send a header, so their webhook URL carries the
 * registry token: `/registry/<source>/<token>` is logged as `/registry/<source>/[redacted]`.
 * Every segment after the source is redacted, whatever the source, so a new path-token route
 * cannot be forgotten here. A mistyped agent path is redacted too (`redactAgentPath`).
 */
export function redactPath(path: string): string {
  // Only request targets: origin-form (`/…`) or absolute (`http://host/…`); a repository file path is left alone.
  if (!/^(?:\/|[a-z][a-z0-9+.-]*:\/\/)/i.test(path)) return path;
  const [target = ''] = path.split(/[?#]/, 1);
  return redactAgentPath(
    target.replace(/^((?:[a-z][a-z0-9+.-]*:\/\/[^/]*)?\/+registry\/+[^/]*)\/.+$/i, '$1/[redacted]'),
  );
}

/**
 * Agent routes are `/agents/<agent>` and `/agents/<agent>/<owner>/<repo>`; a path of any other
 * shape under `/agents/` is a mistyped URL, which often holds the agent key where the owner
 * belongs (`/agents/argocd/<token>`): everything after a lower-case agent name is redacted.
 */
function redactAgentPath(target: string): string {
  const match = /^((?:[a-z][a-z0-9+.-]*:\/\/[^/]*)?\/+agents)(\/.*)$/i.exec(target);
  if (!match || /^\/[a-z]+(?:\/[^/]+\/[^/]+)?\/?$/.test(match[2] ?? '')) return target;
  const agent = /^\/([a-z]{1,20})(?:\/|$)/.exec(match[2] ?? '')?.[1];
  return agent ? `${match[1]}/${agent}/[redacted]` : `${match[1]}/[redacted]`;
}

/** Fields that hold a request path or URL in any log record; `redactPath` cleans each. */
const pathFields = ['path', 'url'] as const;

function redactPathFields(record: Record<string, unknown>): Record<string, unknown> {
  let out = record;
  for (const field of pathFields) {
    const value = out[field];
    if (typeof value === 'string' && redactPath(value) !== value) out = { ...out, [field]: redactPath(value) };
  }
  const req = out.req as { url?: unknown } | undefined;
  if (req && typeof req === 'object' && typeof req.url === 'string')
    out = { ...out, req: { ...req, url: redactPath(req.url) } };
  return out;
}

/** The product's root logger: JSON lines, static messages, data in fields. */
export function createLogger(
  options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const config: LoggerOptions = {
    name: options.name ?? 'escalator',
    level: options.level ?? 'info',
    redact: { paths: redactPaths, censor: '[redacted]' },
    // A path or URL field never carries a path token or a query string, whoever logs it.
    formatters: { log: redactPathFields },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
