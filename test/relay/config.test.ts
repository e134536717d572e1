import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRelayTargets, type RelayTarget } from '../../src/config/relay-targets.js';

const dir = mkdtempSync(join(tmpdir(), 'escalator-relay-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hook = `/hook/${'ab12'.repeat(16)}`;

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function targetsOf(result: ReturnType<typeof loadRelayTargets>): RelayTarget[] {
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.targets;
}

function problemsOf(result: ReturnType<typeof loadRelayTargets>): string[] {
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

describe('relay targets configuration', () => {
  it('has no targets when neither variable is set', () => {
    expect(loadRelayTargets({})).toEqual({ ok: true, targets: [] });
  });

  it('reads JSON from ESCALATOR_RELAY_TARGETS with defaults filled in and the secret resolved', () => {
    const targets = targetsOf(
      loadRelayTargets({
        ESCALATOR_RELAY_TARGETS: JSON.stringify([
          {
            name: 'argocd',
            type: 'argocd',
            url: 'https://argocd.example.com/api/webhook',
            secret: { env: 'ARGOCD_SECRET' },
            repos: ['example/gitops'],
          },
        ]),
        ARGOCD_SECRET: 'hunter2',
      }),
    );
    expect(targets).toHaveLength(1);
    const [target] = targets as [RelayTarget];
    expect({ ...target }).toEqual({
      name: 'argocd',
      type: 'argocd',
      url: 'https://argocd.example.com/api/webhook',
      repos: ['example/gitops'],
      paths: ['**'],
      events: ['push'],
      timeoutMs: 5000,
      coalesceMs: 300,
      attempts: 6,
      backoffMs: 1000,
      sha1Signature: true,
    });
    expect(target.secret).toBe('hunter2');
  });

  it('never shows the secret when a target is serialized or spread', () => {
    const [target] = targetsOf(
      loadRelayTargets({
        ESCALATOR_RELAY_TARGETS: JSON.stringify([
          { name: 'a', type: 'argocd', url: 'http://argocd/api/webhook', secret: { env: 'S' }, repos: ['*/*'] },
        ]),
        S: 'canary-secret-value',
      }),
    ) as [RelayTarget];
    expect(JSON.stringify(target)).not.toContain('canary-secret-value');
    expect(JSON.stringify({ ...target })).not.toContain('canary-secret-value');
    expect(Object.keys(target)).not.toContain('secret');
  });

  it('reads a YAML file, durations and a secret file with its trailing newline dropped', () => {
    const secretFile = file('flux-token', 'token-from-file\n');
    const path = file(
      'targets.yaml',
      [
        'targets:',
        '  - name: flux-prod',
        '    type: flux-github',
        `    url: https://flux.example.com${hook}`,
        `    secret: {file: ${secretFile}}`,
        '    repos: ["example/*"]',
        '    paths: ["clusters/prod/**"]',
        '    events: [push, pull_request]',
        '    timeout: 2s',
        '    coalesce: 500ms',
        '    attempts: 3',
        '    backoff: 1m',
        '  - name: flux-generic',
        '    type: flux-generic-hmac',
        `    url: http://notification-controller.flux-system${hook}`,
        '    secret: {env: GENERIC}',
        '    repos: ["*/*"]',
        '    timeout: 250',
        '',
      ].join('\n'),
    );
    const targets = targetsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: path, GENERIC: 'g' }));
    expect(targets.map((t) => ({ ...t, secret: t.secret }))).toEqual([
      {
        name: 'flux-prod',
        type: 'flux-github',
        url: `https://flux.example.com${hook}`,
        repos: ['example/*'],
        paths: ['clusters/prod/**'],
        events: ['push', 'pull_request'],
        timeoutMs: 2000,
        coalesceMs: 500,
        attempts: 3,
        backoffMs: 60_000,
        sha1Signature: false,
        secret: 'token-from-file',
      },
      {
        name: 'flux-generic',
        type: 'flux-generic-hmac',
        url: `http://notification-controller.flux-system${hook}`,
        repos: ['*/*'],
        paths: ['**'],
        events: ['push'],
        timeoutMs: 250,
        coalesceMs: 300,
        attempts: 6,
        backoffMs: 1000,
        sha1Signature: false,
        secret: 'g',
      },
    ]);
  });

  it('accepts a bare list in a file, and a JSON file', () => {
    const path = file(
      'targets.json',
      JSON.stringify([
        {
          name: 'a',
          type: 'argocd',
          url: 'http://argocd/api/webhook',
          secret: { env: 'S' },
          repos: ['*/*'],
          sha1Signature: false,
        },
      ]),
    );
    const [target] = targetsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: path, S: 'x' })) as [RelayTarget];
    expect(target.sha1Signature).toBe(false);
  });

  it('refuses both variables at once', () => {
    expect(problemsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS: '[]', ESCALATOR_RELAY_TARGETS_FILE: '/x' }))).toEqual(
      ['ESCALATOR_RELAY_TARGETS and ESCALATOR_RELAY_TARGETS_FILE are both set; keep one of them'],
    );
  });

  it('says when the file cannot be read', () => {
    expect(problemsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: join(dir, 'missing.yaml') }))[0]).toMatch(
      /cannot read .*missing\.yaml \(ENOENT\)/,
    );
  });

  it('reports a syntax error with its position', () => {
    const path = file('broken.yaml', 'targets:\n  - name: a\n    url: [unclosed\n');
    const [problem] = problemsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: path }));
    expect(problem).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `));
  });

  it('lists every problem with its path and line, and never a secret value', () => {
    const path = file(
      'bad.yaml',
      [
        'targets:',
        '  - name: argocd',
        '    type: argocd',
        '    url: ftp://argocd/api/webhook',
        '    secret: {env: MISSING_SECRET}',
        '    repos: []',
        '  - name: flux',
        '    type: flux-github',
        `    url: https://flux.example.com${hook}?x=1`,
        '    secret: {value: inline-secret-text}',
        '    repos: ["{a,b"]',
        '    timeout: 2 hours',
        '    colour: blue',
        '  - name: argocd',
        '    type: flux-generic-hmac',
        '    url: https://user:pass@flux.example.com/hook/short',
        '    secret: {env: X}',
        '    repos: ["*/*"]',
        '    sha1Signature: true',
        '',
      ].join('\n'),
    );
    const problems = problemsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: path }));
    const at = (line: number) => `${path}:${line}:`;
    expect(problems.join('\n')).not.toContain('inline-secret-text');
    const expected: Array<[number, string, RegExp]> = [
      [4, 'targets[0].url', /http:\/\/ or https:\/\//],
      [6, 'targets[0].repos', /at least one repository glob/],
      [9, 'targets[1].url', /query string/],
      [10, 'targets[1].secret', /\{env: NAME\} or \{file: PATH\}/],
      [11, 'targets[1].repos[0]', /never closed/],
      [12, 'targets[1].timeout', /duration/],
      [7, 'targets[1]', /unknown setting colour/],
      [16, 'targets[2].url', /credentials/],
      [16, 'targets[2].url', /\/hook\/<sha256>/],
      [19, 'targets[2].sha1Signature', /flux-generic-hmac/],
      [14, 'targets[2].name', /already the name of target 0/],
    ];
    for (const [line, field, message] of expected) {
      const match = problems.find(
        (problem) => problem.startsWith(at(line)) && problem.includes(` ${field}: `) && message.test(problem),
      );
      expect(match, `${field} (line ${line}) ${message} in:\n${problems.join('\n')}`).toBeDefined();
    }
  });

  it('reports a secret variable that is not set, naming the variable only', () => {
    const problems = problemsOf(
      loadRelayTargets({
        ESCALATOR_RELAY_TARGETS: JSON.stringify([
          { name: 'a', type: 'argocd', url: 'http://a/api/webhook', secret: { env: 'ARGO_SECRET' }, repos: ['*/*'] },
        ]),
      }),
    );
    expect(problems).toEqual([
      "ESCALATOR_RELAY_TARGETS: targets[0].secret (a): environment variable ARGO_SECRET is not set or empty; set it to the agent's webhook secret",
    ]);
  });

  it('reports an empty or missing secret file', () => {
    const empty = file('empty-secret', '\n');
    const problems = problemsOf(
      loadRelayTargets({
        ESCALATOR_RELAY_TARGETS: JSON.stringify([
          { name: 'a', type: 'argocd', url: 'http://a/api/webhook', secret: { file: empty }, repos: ['*/*'] },
          {
            name: 'b',
            type: 'argocd',
            url: 'http://b/api/webhook',
            secret: { file: join(dir, 'nope') },
            repos: ['*/*'],
          },
        ]),
      }),
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/targets\[0\]\.secret \(a\): .*empty-secret is empty/);
    expect(problems[1]).toMatch(/targets\[1\]\.secret \(b\): cannot read .*nope \(ENOENT\)/);
  });

  it('says what the top level must be', () => {
    expect(problemsOf(loadRelayTargets({ ESCALATOR_RELAY_TARGETS: '"argocd"' }))[0]).toMatch(
      /^ESCALATOR_RELAY_TARGETS:1:1: \(top level\): /,
    );
  });
});
