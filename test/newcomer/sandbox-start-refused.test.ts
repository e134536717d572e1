/**
 * A sandbox that cannot work says so before it prints "running", as a new user meets it: a
 * `--repo` folder whose .github/escalator.yml has a problem (with any agent) stops with the file,
 * line and fix; a REDIS_URL that does not answer is said at once, without Escalator's retries;
 * and a start that fails leaves nothing in the temporary folder. Neither reaches Redis or Escalator, so the file is cheap.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const root = join(import.meta.dirname, '../..');
const folders: string[] = [];
const servers: Server[] = [];
afterAll(() => {
  folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }));
  servers.forEach((server) => server.close());
});

function folder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

/** `npm run sandbox -- …` with its own temporary folder; resolves when it exits. */
function sandbox(
  args: string[],
  tmp: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'sandbox', '--', ...args],
      { cwd: root, env: { ...process.env, TMPDIR: tmp, LOG_LEVEL: 'warn', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('a sandbox that cannot work stops before "running"', () => {
  it('names the file, line and fix of a --repo configuration problem, and a failed start leaves no temporary folder', async () => {
    const repo = folder('bad-gitops-');
    cpSync(join(root, 'examples/gitops-repo/apps'), join(repo, 'apps'), { recursive: true });
    mkdirSync(join(repo, '.github'));
    const config = join(repo, '.github/escalator.yml');
    // A second `health:` key, as the sandbox itself once added next to the user's own.
    writeFileSync(
      config,
      'environments:\n  - name: dev\n    health: { argocd: "{app}-dev" }\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health: { flux: apps-dev }\n',
    );
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = (taken.address() as { port: number }).port;
    const silent = await freePort();
    const tmps = [folder('sandbox-tmp-'), folder('sandbox-tmp-'), folder('sandbox-tmp-'), folder('sandbox-tmp-')];
    const [argocd, none, portTaken, redisDown] = await Promise.all([
      sandbox(['--repo', repo], tmps[0]!),
      sandbox(['--repo', repo, '--agent', 'none'], tmps[1]!),
      sandbox(['--app-port', String(takenPort)], tmps[2]!),
      sandbox(['--app-port', String(await freePort())], tmps[3]!, {
        REDIS_URL: `redis://:hunter2@127.0.0.1:${silent}`,
      }),
    ]);
    // REDIS_URL that does not answer: one clear message at once, not Escalator's retries; no password in it.
    expect(redisDown.code).toBe(1);
    expect(redisDown.stderr).toContain(`Redis at redis://:***@127.0.0.1:${silent} (REDIS_URL) does not answer`);
    expect(redisDown.stderr).toContain('unset REDIS_URL');
    expect(redisDown.stderr).not.toContain('Redis connection error');
    expect(redisDown.stderr).not.toContain('hunter2');
    expect(redisDown.stdout).not.toContain('running');
    for (const run of [argocd, none]) {
      expect(run.code).toBe(1);
      expect(run.stdout).not.toContain('running');
      expect(run.stderr).toContain(`${config} has problems, so Escalator would pause this repository`);
      expect(run.stderr).toMatch(new RegExp(`${config.replace(/[.]/g, '\\.')}:6:5: .*health`));
      expect(run.stderr).toContain(`npm run escalator -- validate-config ${config}`);
    }
    expect(portTaken.code).toBe(1);
    expect(portTaken.stderr).toContain(`Port ${takenPort} on 127.0.0.1 is already in use`);
    for (const tmp of tmps) expect(readdirSync(tmp).filter((name) => name.startsWith('escalator-sandbox'))).toEqual([]);
  }, 120_000);
});
