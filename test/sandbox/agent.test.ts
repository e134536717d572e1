import { agentKey } from '../../src/intake/agent-routes.js';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SandboxClient, startSimulator, type Simulator } from '@escalator/github-sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedAgent, withAgentHealth } from '@escalator/github-sandbox/agents';
import { configPath, parseRepoConfig, repoConfigProblems } from '../../src/config/repo-config.js';
import { eventually } from '../support/stack.js';

/**
 * The sandbox's simulated agent: health on every seeded environment, and after each push one
 * report per object in the agent's wire format (Argo CD: the shipped notifications template's body
 * with a bearer token; Flux: an Event signed with X-Signature), plus Degraded and back on demand.
 */
const example = join(import.meta.dirname, '../../examples/gitops-repo');
const token = 'agent-token-for-tests';
const seedConfig = { path: configPath, problems: repoConfigProblems };

describe('npm run sandbox -- --agent', () => {
  it('seeds a copy whose environments name the agent objects, every other byte unchanged, and leaves the folder alone', () => {
    const original = readFileSync(join(example, '.github/escalator.yml'), 'utf8');
    const copy = withAgentHealth(example, 'argocd', seedConfig);
    try {
      const seeded = readFileSync(join(copy.dir, '.github/escalator.yml'), 'utf8');
      const expected = original
        .replace('  - name: dev\n', '  - name: dev\n    health: { argocd: "{app}-dev" }\n')
        .replace('  - name: staging\n', '  - name: staging\n    health: { argocd: "{app}-staging" }\n')
        .replace('  - name: prod\n', '  - name: prod\n    health: { argocd: "{app}-prod" }\n');
      expect(seeded).toBe(expected);
      const parsed = parseRepoConfig(seeded);
      expect(parsed.ok).toBe(true);
      expect(copy.objects.map((object) => object.object)).toEqual([
        'hello-dev',
        'world-dev',
        'hello-staging',
        'world-staging',
        'hello-prod',
        'world-prod',
      ]);
    } finally {
      copy.remove();
    }
    expect(existsSync(copy.dir)).toBe(false);
    expect(readFileSync(join(example, '.github/escalator.yml'), 'utf8')).toBe(original);
    const flux = withAgentHealth(example, 'flux', seedConfig);
    try {
      expect(readFileSync(join(flux.dir, '.github/escalator.yml'), 'utf8')).toContain(
        '  - name: staging\n    health: { flux: "flux-system/apps-staging" }\n',
      );
      expect(flux.objects).toEqual([
        { object: 'flux-system/apps-dev', environment: 'dev' },
        { object: 'flux-system/apps-staging', environment: 'staging' },
        { object: 'flux-system/apps-prod', environment: 'prod' },
      ]);
    } finally {
      flux.remove();
    }
  });

  describe('reports after each push', () => {
    let sim: Simulator;
    let client: SandboxClient;
    const received: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];
    let escalatorUrl = '';
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(202).end();
      });
    });
    beforeAll(async () => {
      sim = await startSimulator();
      client = new SandboxClient(sim.url, sim.user.token);
      await client.createRepo({ owner: 'example', name: 'gitops', files: { 'a.yaml': 'a: 1\n' } });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      escalatorUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await sim?.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    });
    const agentOf = (agent: 'argocd' | 'flux', object: string) =>
      new SimulatedAgent({
        agent,
        escalatorUrl,
        key: agentKey(token, 'example'),
        owner: 'example',
        repo: 'gitops',
        branch: 'main',
        githubApiUrl: sim.apiUrl,
        githubToken: sim.user.token,
        repoURL: 'https://github.example/example/gitops.git',
        objects: [{ object, environment: 'staging' }],
        delayMs: 50,
        pollMs: 50,
      });

    it('Argo CD: the template body with a bearer token at the synced commit, then Degraded and back', async () => {
      const agent = agentOf('argocd', 'hello-staging');
      const control = await agent.start();
      try {
        const { sha } = await client.commit('example/gitops', { branch: 'main', files: { 'a.yaml': 'a: 2\n' } });
        const report = await eventually(
          async () => received.find((r) => r.url === '/agents/argocd/example/gitops' && r.body.includes(sha)),
          { what: 'an Argo CD report at the new commit' },
        );
        expect(report.headers.authorization).toBe(`Bearer ${agentKey(token, 'example')}`);
        const body = JSON.parse(report.body) as Record<string, unknown>;
        expect(Object.keys(body)).toEqual([
          'format',
          'app',
          'namespace',
          'repoURL',
          'revision',
          'syncStatus',
          'healthStatus',
          'healthChangedAt',
          'operationPhase',
          'operationMessage',
          'finishedAt',
          'url',
        ]);
        expect(body).toMatchObject({
          format: 'escalator/argocd-v1',
          app: 'hello-staging',
          namespace: 'argocd',
          revision: sha,
          syncStatus: 'Synced',
          healthStatus: 'Healthy',
          url: 'https://argocd.sandbox.invalid/applications/hello-staging',
        });
        const degraded = await fetch(`${control}/degrade?object=hello-staging&message=0%2F3%20ready`, {
          method: 'POST',
        });
        expect(await degraded.json()).toEqual({ object: 'hello-staging', reported: 202 });
        const last = JSON.parse(received.at(-1)?.body ?? '{}') as Record<string, unknown>;
        expect(last).toMatchObject({ healthStatus: 'Degraded', revision: sha, operationMessage: '0/3 ready' });
        await fetch(`${control}/recover?object=hello-staging`, { method: 'POST' });
        expect(JSON.parse(received.at(-1)?.body ?? '{}')).toMatchObject({ healthStatus: 'Healthy' });
        // The commit it found at start, the pushed one, then Degraded and back.
        expect(agent.sent.map((s) => s.health)).toEqual(['Healthy', 'Healthy', 'Degraded', 'Healthy']);
      } finally {
        await agent.close();
      }
    });

    it('Flux: an Event signed with X-Signature over the exact body, revision as <branch>@sha1:<commit>', async () => {
      const agent = agentOf('flux', 'flux-system/apps-staging');
      await agent.start();
      try {
        const { sha } = await client.commit('example/gitops', { branch: 'main', files: { 'a.yaml': 'a: 3\n' } });
        const report = await eventually(
          async () => received.find((r) => r.url === '/agents/flux/example/gitops' && r.body.includes(sha)),
          { what: 'a Flux event at the new commit' },
        );
        expect(report.headers['x-signature']).toBe(
          `sha256=${createHmac('sha256', agentKey(token, 'example')).update(report.body).digest('hex')}`,
        );
        expect(JSON.parse(report.body)).toMatchObject({
          involvedObject: { kind: 'Kustomization', namespace: 'flux-system', name: 'apps-staging' },
          severity: 'info',
          reason: 'ReconciliationSucceeded',
          metadata: { revision: `main@sha1:${sha}` },
        });
      } finally {
        await agent.close();
      }
    });
  });
});
