/**
 * The GitHub intake's table (src/intake/github/): every event the App subscribes to has a handler
 * and every handler answers an event the App receives, and the one context helper gives each
 * handler the repository as Probot's context reads it, from GitHub's own example deliveries.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Context, ProbotOctokit } from 'probot';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { githubHandlers, intakeEvent, type GitHubIntake } from '../../src/intake/github/index.js';
import { createLogger } from '../../src/observability/logger.js';

const require = createRequire(import.meta.url);
const examples = JSON.parse(readFileSync(require.resolve('@octokit/webhooks-examples'), 'utf8')) as Array<{
  name: string;
  examples: Array<Record<string, unknown>>;
}>;
const example = (name: string, action?: string): Record<string, unknown> => {
  const found = examples
    .find((entry) => entry.name === name)
    ?.examples.find((payload) => action === undefined || payload.action === action);
  if (!found) throw new Error(`@octokit/webhooks-examples has no ${name} ${action ?? ''} example`);
  return found;
};

/** GitHub delivers these to every App, subscribed or not (app.yml says so). */
const alwaysDelivered = ['installation', 'installation_repositories'];

describe('the GitHub handler table', () => {
  const handled = new Set(githubHandlers.flatMap((entry) => entry.events.map((name) => name.split('.')[0]!)));
  const subscribed = (parse(readFileSync('app.yml', 'utf8')) as { default_events: string[] }).default_events;

  it('answers every event app.yml subscribes to, and only events the App receives', () => {
    expect(subscribed.filter((name) => !handled.has(name))).toEqual([]);
    expect([...handled].filter((name) => !subscribed.includes(name) && !alwaysDelivered.includes(name))).toEqual([]);
  });

  it('registers each event and action once', () => {
    const names = githubHandlers.flatMap((entry) => entry.events);
    expect(names.length).toBe(new Set(names).size);
    expect(githubHandlers).toHaveLength(12);
  });
});

describe('the context helper', () => {
  const intake = { log: createLogger({ level: 'silent' }) } as GitHubIntake;
  const contextOf = (name: string, payload: Record<string, unknown>) =>
    new Context({ id: 'delivery-1', name, payload } as never, new ProbotOctokit(), createLogger({ level: 'silent' }));

  it.each([
    ['push', undefined],
    ['pull_request', 'closed'],
    ['issue_comment', 'created'],
    ['status', undefined],
  ])('reads the repository of a %s delivery with Probot (context.repo()), with its installation', (name, action) => {
    // An App's deliveries carry the installation; some of GitHub's examples are a repository webhook's.
    const payload: Record<string, unknown> & { installation: { id: number } } = {
      installation: { id: 42 },
      ...example(name, action),
    };
    const repository = payload.repository as { name: string; owner: { login: string } };
    const event = intakeEvent(contextOf(name, payload), intake);
    expect(event.id).toBe('delivery-1');
    expect(event.repository).toEqual({ owner: repository.owner.login, repo: repository.name });
    expect(event.repo).toEqual({
      installationId: payload.installation.id,
      owner: repository.owner.login,
      repo: repository.name,
    });
  });

  it('names no single repository for an installation delivery (its repositories are listed)', () => {
    const event = intakeEvent(contextOf('installation', example('installation', 'created')), intake);
    expect([event.repository, event.repo]).toEqual([undefined, undefined]);
  });

  it('names no installation when the delivery has none, so no job is enqueued for it', () => {
    const { installation, ...payload } = example('pull_request', 'closed');
    expect(installation).toBeDefined();
    const event = intakeEvent(contextOf('pull_request', payload), intake);
    expect(event.repository).toBeDefined();
    expect(event.repo).toBeUndefined();
  });
});
