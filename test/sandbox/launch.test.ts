import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SandboxClient } from '@escalator/github-sandbox';
import type { SandboxReady } from '@escalator/github-sandbox/launch';
import { Octokit } from '@octokit/rest';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts `src/main/sandbox.ts` and resolves with its SANDBOX_READY document. */
async function startSandbox(args: string[]): Promise<{ child: ChildProcess; ready: SandboxReady; stdout: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/sandbox.ts', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<SandboxReady>((resolve, reject) => {
    lines.on('line', (line) => {
      stdout.push(line);
      if (line.startsWith('SANDBOX_READY ')) resolve(JSON.parse(line.slice('SANDBOX_READY '.length)) as SandboxReady);
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr.join('')}`)));
  });
  return { child, ready, stdout };
}

describe('npm run sandbox', () => {
  it('seeds the repository, starts the App against the simulator, prints the next steps and stops on Ctrl-C', async () => {
    const appPort = await freePort();
    const { child, ready, stdout } = await startSandbox([
      '--app-port',
      String(appPort),
      '--registry-token',
      'sandbox-test-token-0123456789',
      '--app-command',
      `${process.execPath} --import tsx test/sandbox/fixtures/probe-app.ts`,
    ]);
    expect(ready).toMatchObject({
      repository: 'example/gitops',
      app_url: `http://127.0.0.1:${appPort}`,
      registry_token: 'sandbox-test-token-0123456789',
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stdout.join('\n')).toContain(`curl -sS -X POST http://127.0.0.1:${appPort}/registry/distribution`);

    const client = new SandboxClient(ready.github_url, ready.user.token);
    const { sha } = await client.commit('example/gitops', {
      branch: 'main',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': 'images: []\n' },
    });
    const [push] = await client.deliveries({ event: 'push' });
    expect(push).toMatchObject({ status: 'OK', status_code: 200 });
    const octokit = new Octokit({ baseUrl: ready.api_url, auth: ready.user.token });
    let runs: { name: string; output: { title: string | null; summary: string | null } }[] = [];
    for (let i = 0; i < 40 && runs.length === 0; i++) {
      runs = (await octokit.rest.checks.listForRef({ owner: 'example', repo: 'gitops', ref: sha })).data.check_runs;
      if (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(runs.map((r) => [r.name, r.output.title, r.output.summary])).toEqual([
      ['sandbox-probe', 'registry token set', "# Escalator: how images move through this repository's environments."],
    ]);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect(fetch(`${ready.app_url}/healthz`)).rejects.toThrow();
    await expect(fetch(`${ready.github_url}/_sandbox/info`)).rejects.toThrow();
  }, 90_000);

  it('refuses a bad port with the usage text', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/sandbox.ts', '--app-port', 'abc'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const stderr: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.join('')).toContain('--app-port must be a port number');
  });
});
