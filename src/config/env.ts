import { readFileSync } from 'node:fs';
import { EnvSchema, type Env } from './env.schema.js';

export type { Env };

export type EnvResult = { ok: true; env: Env } | { ok: false; problems: string[] };

/** What to do about each variable when it is missing or wrong. */
const hints: Record<string, string> = {
  APP_ID:
    'copy it from your GitHub App settings page, or run `npm start` without APP_ID and PRIVATE_KEY to register a new App',
  PRIVATE_KEY:
    'generate a key on the GitHub App settings page and set PRIVATE_KEY to its PEM text or PRIVATE_KEY_PATH to the .pem file',
  WEBHOOK_SECRET: 'set it to the webhook secret of your GitHub App',
  GITHUB_API_URL: 'use https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server',
  REDIS_URL: 'for example redis://127.0.0.1:6379',
  PORT: 'use a number from 0 to 65535',
  ESCALATOR_ROLE: 'use all, web or worker',
};

/**
 * Read and validate the environment. `PRIVATE_KEY_PATH` is resolved here (the only I/O), and
 * `GHE_HOST`/`GHE_PROTOCOL` — Probot's spelling for GitHub Enterprise — are honoured.
 */
export function loadEnv(source: Readonly<Record<string, string | undefined>>): EnvResult {
  const raw: Record<string, string | undefined> = { ...source };
  const problems: string[] = [];
  if (!raw.PRIVATE_KEY && raw.PRIVATE_KEY_PATH) {
    try {
      raw.PRIVATE_KEY = readFileSync(raw.PRIVATE_KEY_PATH, 'utf8');
    } catch (error) {
      problems.push(
        `PRIVATE_KEY_PATH: cannot read ${raw.PRIVATE_KEY_PATH} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and the file's permissions`,
      );
    }
  }
  if (raw.PRIVATE_KEY && !raw.PRIVATE_KEY.includes('-----') && /^[A-Za-z0-9+/=\s]+$/.test(raw.PRIVATE_KEY)) {
    // Probot accepts a base64-encoded key for platforms without multi-line variables.
    raw.PRIVATE_KEY = Buffer.from(raw.PRIVATE_KEY, 'base64').toString('utf8');
  }
  if (raw.PRIVATE_KEY) raw.PRIVATE_KEY = raw.PRIVATE_KEY.replace(/\\n/g, '\n');
  if (!raw.GITHUB_API_URL && raw.GHE_HOST)
    raw.GITHUB_API_URL = `${raw.GHE_PROTOCOL ?? 'https'}://${raw.GHE_HOST}/api/v3`;
  for (const key of Object.keys(raw)) if (raw[key] === '') delete raw[key];

  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '(environment)');
      const missing = issue.code === 'invalid_type' && raw[name] === undefined;
      const what = missing ? 'is required but not set' : issue.message;
      const hint = hints[name];
      problems.push(`${name}: ${what}${hint ? `; ${hint}` : ''}`);
    }
  }
  if (problems.length > 0 || !parsed.success) return { ok: false, problems };
  return { ok: true, env: parsed.data };
}

/** True when the process has no App credentials at all: Probot's setup flow should run. */
export function needsAppSetup(source: Readonly<Record<string, string | undefined>>): boolean {
  return !source.APP_ID && !source.PRIVATE_KEY && !source.PRIVATE_KEY_PATH;
}

export function formatEnvProblems(problems: string[]): string {
  return [
    `Escalator cannot start: ${problems.length} configuration problem${problems.length === 1 ? '' : 's'} in the environment.`,
    ...problems.map((p) => `  - ${p}`),
    'Set the variables (or put them in a .env file) and start again. See docs/configuration.md.',
  ].join('\n');
}
