import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';
import { OpenApiRecorder, SchemaValidators } from '../testing/openapi.js';

/**
 * The recorders themselves: a request or response that strays from GitHub's OpenAPI description,
 * sent through the simulator over HTTP, is reported with the place and the schema's complaint,
 * whether the validator was compiled in this process or loaded from the validator cache another
 * process wrote; so is a webhook payload that strays from GitHub's webhook schemas.
 */

let h: Harness;
let app: Octokit;
let cacheDir: string;
/** Compiles every validator itself (no cache). */
let compiling: OpenApiRecorder;
/** Compiles into an empty cache directory, and writes what it compiled there. */
let cold: OpenApiRecorder;
/** Created after `cold`, on the same directory: loads what `cold` wrote. */
let warm: OpenApiRecorder;
let warmValidators: SchemaValidators;
let coldValidators: SchemaValidators;

beforeAll(async () => {
  h = await startHarness();
  const { installationId } = await h.seedRepo('planted', { 'README.md': 'hello\n' });
  app = await h.installationOctokit(installationId);
  cacheDir = mkdtempSync(join(tmpdir(), 'openapi-validators-'));
  compiling = new OpenApiRecorder(new SchemaValidators({ cacheDir: null }));
  coldValidators = new SchemaValidators({ cacheDir });
  cold = new OpenApiRecorder(coldValidators);
  warmValidators = new SchemaValidators({ cacheDir });
  warm = new OpenApiRecorder(warmValidators);
  // Called in this order for every exchange: `cold` has written a validator before `warm` needs it.
  h.sim.onExchange((exchange) => compiling.check(exchange));
  h.sim.onExchange((exchange) => cold.check(exchange));
  h.sim.onExchange((exchange) => warm.check(exchange));
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** The failures every recorder collected since the last call, emptied; all four must agree. */
function takeFailures(): string[] {
  const all = [h.openapi, compiling, cold, warm].map((recorder) => recorder.failures.splice(0));
  for (const failures of all.slice(1)) expect(failures).toEqual(all[0]);
  return all[0] ?? [];
}

describe('OpenAPI recorder', () => {
  it('reports a request body the description does not allow (an issue body of null, not a string)', async () => {
    takeFailures();
    const { status, data } = await app.request('POST /repos/{owner}/{repo}/issues', {
      owner: 'example',
      repo: 'planted',
      title: 'Planted',
      // Octokit's types follow the description; the wire takes any JSON.
      body: null as unknown as string,
    });
    // The simulator takes it (GitHub does too); GitHub's description types `body` as a string.
    expect(status).toBe(201);
    expect(takeFailures()).toEqual([
      `POST /repos/example/planted/issues → 201: request body does not match GitHub's schema: /body must be string {"type":"string"}`,
    ]);
    // Only the request strayed: the 201's body (an issue) matched, in all four recorders.
    expect(data.title).toBe('Planted');
  });

  it('reports a response body the description does not allow (a repository description that is a number)', async () => {
    takeFailures();
    const repo = h.sim.context.state.repo('example', 'planted');
    if (!repo) throw new Error('example/planted was not created: see the beforeAll hook');
    repo.description = 42 as unknown as string;
    try {
      const { status } = await app.rest.repos.get({ owner: 'example', repo: 'planted' });
      expect(status).toBe(200);
    } finally {
      repo.description = null;
    }
    expect(takeFailures()).toEqual([
      `GET /repos/example/planted → 200: response body does not match GitHub's schema: ` +
        `/description must be string {"type":"string"}; /description must be null {"type":"null"}; ` +
        `/description must match a schema in anyOf {}`,
    ]);
    await app.rest.repos.get({ owner: 'example', repo: 'planted' });
    expect(takeFailures()).toEqual([]);
  });

  it('reports a webhook payload the schemas do not allow (a push whose repository description is a number)', async () => {
    const repo = h.sim.context.state.repo('example', 'planted');
    if (!repo) throw new Error('example/planted was not created: see the beforeAll hook');
    h.webhooks.failures.splice(0);
    repo.description = 42 as unknown as string;
    try {
      await h.client.commit('example/planted', { branch: 'main', files: { 'planted.txt': 'x\n' } });
      await h.sim.context.webhooks.idle();
    } finally {
      repo.description = null;
    }
    expect(h.webhooks.failures.splice(0)).toEqual([
      'push$event /repository/description must be string,null {"type":["string","null"]}',
    ]);
    takeFailures();
  });

  it('checks with validators loaded from the cache, never compiling what another process compiled', () => {
    expect(coldValidators.counts.loaded).toBe(0);
    // The request body and 201, and the repository's 200.
    expect(coldValidators.counts.compiled).toBe(3);
    expect(warmValidators.counts.compiled).toBe(0);
    expect(warmValidators.counts.loaded).toBe(coldValidators.counts.compiled);
    expect(readdirSync(cacheDir).filter((name) => name.endsWith('.ajv'))).toHaveLength(coldValidators.counts.compiled);
  });
});
