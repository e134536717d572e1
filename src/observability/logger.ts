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

/** The product's root logger: JSON lines, static messages, data in fields. */
export function createLogger(options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const config: LoggerOptions = {
    name: options.name ?? 'escalator',
    level: options.level ?? 'info',
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
