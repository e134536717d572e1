import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/env.js';
import { createNotesDeps } from '../../src/jobs/notes-deps.js';
import { webHostOf } from '../../src/jobs/shared/release-notes.js';
import { createLogger } from '../../src/observability/logger.js';

const log = createLogger({ level: 'silent' });
const work = mkdtempSync(join(tmpdir(), 'escalator-auth-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const env = (file?: string) =>
  ({ GITHUB_API_URL: 'https://api.github.com', ...(file ? { ESCALATOR_REGISTRY_AUTH_FILE: file } : {}) }) as Env;

describe('createNotesDeps', () => {
  it('reads the credentials of ESCALATOR_REGISTRY_AUTH_FILE by host, each for the owners its entry names', () => {
    const file = join(work, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ auths: { 'ghcr.io': { username: 'bot', password: 'secret-value', owners: ['example'] } } }),
    );
    const deps = createNotesDeps(env(file), log);
    expect(deps.registry.forOwner('example').hasCredentials('ghcr.io')).toBe(true);
    expect(deps.registry.forOwner('example').hasCredentials('docker.io')).toBe(false);
    expect(deps.registry.forOwner('acme').hasCredentials('ghcr.io')).toBe(false);
    expect(deps.webHost).toBe('github.com');
  });

  it('stops the worker at start on a file written before owners existed, with the line to add', () => {
    const file = join(work, 'old.json');
    writeFileSync(file, JSON.stringify({ auths: { 'ghcr.io': { username: 'bot', password: 'secret-value' } } }));
    const start = () => createNotesDeps(env(file), log);
    expect(start).toThrow(
      `registry credentials: ESCALATOR_REGISTRY_AUTH_FILE (${file}): auths.ghcr.io names no owners, so Escalator does not know whose images its credential may read; add "owners": ["<GitHub owner>"] to it`,
    );
    expect(start).not.toThrow(/secret-value/);
  });

  it('stops the worker with every problem named and no secret', () => {
    const file = join(work, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        auths: { 'ghcr.io': { auth: Buffer.from('no-colon-secret').toString('base64'), owners: ['example'] } },
      }),
    );
    expect(() => createNotesDeps(env(file), log)).toThrow(
      `registry credentials: ESCALATOR_REGISTRY_AUTH_FILE (${file}): auths.ghcr.io.auth is not base64 of "user:password"; run docker login again or fix it`,
    );
    expect(() => createNotesDeps(env(join(work, 'missing.json')), log)).toThrow(
      /cannot read .*missing\.json \(ENOENT\); check the path and the file's permissions/,
    );
  });

  it('reads images anonymously when the variable is unset', () => {
    expect(createNotesDeps(env(), log).registry.forOwner('example').hasCredentials('ghcr.io')).toBe(false);
  });
});

describe('webHostOf', () => {
  it.each([
    ['https://api.github.com', 'github.com'],
    ['https://github.example.com/api/v3', 'github.example.com'],
    ['http://127.0.0.1:4000/api/v3', '127.0.0.1:4000'],
  ])('%s → %s', (url, host) => expect(webHostOf(url)).toBe(host));
});
