/**
 * `npm start` without App credentials, as README.md describes it: the setup page that registers
 * the App from app.yml, with the webhook URL Escalator listens on, no smee.io promise, and health
 * routes that say what to do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const root = join(import.meta.dirname, '../..');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('npm start without GitHub App credentials', () => {
  it('serves the setup page with the webhook path, answers /healthz and /readyz, and starts no proxy', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'development' };
    for (const name of ['APP_ID', 'PRIVATE_KEY', 'PRIVATE_KEY_PATH', 'WEBHOOK_PROXY_URL', 'NO_SMEE_SETUP'])
      delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/index.ts'], { cwd: root, env });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 120 && !output.includes('No GitHub App credentials'); i++)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(output).toContain(`open ${base} and choose`);

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', mode: 'setup' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { github: string } }).checks.github).toContain(
      'the GitHub App is not registered yet',
    );

    expect((await fetch(base, { redirect: 'manual' })).headers.get('location')).toBe('/probot');
    const manifestOf = async (headers: Record<string, string>) => {
      const page = await (await fetch(`${base}/probot`, { headers })).text();
      const json = /name="manifest"[^>]*value='([^']*)'/.exec(page)?.[1] ?? /value="(\{[^"]*)"/.exec(page)?.[1] ?? '';
      return JSON.parse(json.replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as {
        name: string;
        hook_attributes: { url: string };
        default_events: string[];
      };
    };
    const local = await manifestOf({});
    expect(local.hook_attributes).toEqual({ url: `${base}/api/github/webhooks` });
    expect(local.name).toBe('Escalator');
    expect(local.default_events).toContain('registry_package');
    // Behind a proxy the page was opened at the public address: that is where GitHub must deliver.
    const proxied = await manifestOf({ 'x-forwarded-host': 'escalator.example.com', 'x-forwarded-proto': 'https' });
    expect(proxied.hook_attributes).toEqual({ url: 'https://escalator.example.com/api/github/webhooks' });

    expect(output).not.toContain('SmeeClient');
    expect(output).not.toContain('smee.io');
    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
  });
});
