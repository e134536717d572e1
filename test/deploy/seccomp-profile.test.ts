import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys, eventually, redisUrl } from '../support/stack.js';
import { root } from './install-checks.js';

/**
 * The worker's seccomp profile (deploy/seccomp/escalator-worker.json), loaded as a kernel filter
 * the way runc loads a Kubernetes `Localhost` profile (test/deploy/support/seccomp-exec.c), around
 * a real render in the `namespace` sandbox with the real `kubectl kustomize`. The same profile
 * without Escalator's entries, which is the runtime's default for a container without
 * capabilities, is the control: under it the sandbox cannot be built.
 */

interface Arg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}
interface Rule {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: Arg[];
  comment?: string;
}
interface Profile {
  defaultAction: string;
  defaultErrnoRet: number;
  architectures: string[];
  syscalls: Rule[];
}

const profile = JSON.parse(readFileSync(join(root, 'deploy/seccomp/escalator-worker.json'), 'utf8')) as Profile;
const own = (rule: Rule): boolean => rule.comment?.startsWith('escalator:') ?? false;

/** The lines seccomp-exec reads: the default action, then one line per name and rule. */
function rulesText(rules: Rule[]): string {
  const lines = [`${profile.defaultAction} ${profile.defaultErrnoRet}`];
  for (const rule of rules)
    for (const name of rule.names)
      lines.push(
        [
          rule.action,
          rule.errnoRet ?? profile.defaultErrnoRet,
          name,
          rule.args?.length ?? 0,
          ...(rule.args ?? []).flatMap((arg) => [arg.index, arg.op, arg.value, arg.valueTwo ?? 0]),
        ].join(' '),
      );
  return `${lines.join('\n')}\n`;
}

describe('the worker seccomp profile', () => {
  let dir: string;
  let exec: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'escalator-seccomp-'));
    exec = join(dir, 'seccomp-exec');
    const library = /libseccomp\.so\.2 \([^)]*\) => (\S+)/.exec(execFileSync('ldconfig', ['-p']).toString())?.[1];
    if (!library) throw new Error('libseccomp.so.2 is not installed; install libseccomp2 to run this test');
    execFileSync('gcc', ['-O1', '-o', exec, join(root, 'test/deploy/support/seccomp-exec.c'), library]);
    writeFileSync(join(dir, 'worker.rules'), rulesText(profile.syscalls));
    writeFileSync(join(dir, 'default.rules'), rulesText(profile.syscalls.filter((rule) => !own(rule))));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function renderUnder(rules: 'worker' | 'default'): unknown {
    const run = spawnSync(
      exec,
      [
        join(dir, `${rules}.rules`),
        process.execPath,
        '--import',
        'tsx',
        join(root, 'test/deploy/support/render-under-profile.ts'),
        execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim(),
      ],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
  }

  it('adds to the default only unshare with CLONE_NEWUSER (or no flag), mount and chroot', () => {
    const added = profile.syscalls.filter(own);
    expect(added.flatMap((rule) => rule.names).sort()).toEqual(
      [
        'chroot',
        'fsconfig',
        'fsmount',
        'fsopen',
        'mount',
        'mount_setattr',
        'move_mount',
        'open_tree',
        'unshare',
        'unshare',
      ].sort(),
    );
    const unshare = added.filter((rule) => rule.names.includes('unshare')).map((rule) => rule.args);
    expect(unshare).toEqual([
      [{ index: 0, value: 0x10000000, valueTwo: 0x10000000, op: 'SCMP_CMP_MASKED_EQ' }],
      [{ index: 0, value: 0, op: 'SCMP_CMP_EQ' }],
    ]);
    // Namespaces by clone stay refused, as in the default; clone3 answers ENOSYS so libc falls back to clone.
    expect(profile.syscalls.filter((rule) => rule.names.includes('clone')).map((rule) => rule.args)).toEqual([
      [{ index: 0, value: 2114060288, op: 'SCMP_CMP_MASKED_EQ' }],
    ]);
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
  });

  it('lets the worker build the sandbox and render with kubectl kustomize', () => {
    expect(renderUnder('worker')).toEqual({
      status: 'ok',
      yaml: 'apiVersion: v1\ndata:\n  a: "1"\nkind: ConfigMap\nmetadata:\n  name: dev-app\n',
    });
  }, 90_000);

  it('is needed: under the runtime default the sandbox cannot be built and the render is refused', () => {
    expect(renderUnder('default')).toEqual({
      status: 'failed',
      message: expect.stringContaining('(unshare: unshare failed: Operation not permitted)') as string,
    });
  }, 90_000);

  it('leaves a worker without it in namespace mode, which refuses renders and says so, never proxy', async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const prefix = `seccomp-${randomUUID().slice(0, 8)}`;
    const { ESCALATOR_RENDER_ISOLATION: _unset, ...inherited } = process.env;
    const child = spawn(exec, [join(dir, 'default.rules'), process.execPath, '--import', 'tsx', 'src/main/index.ts'], {
      cwd: root,
      env: {
        ...inherited,
        ESCALATOR_ROLE: 'worker',
        APP_ID: '123',
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: 'test-secret',
        REDIS_URL: redisUrl,
        ESCALATOR_REDIS_PREFIX: prefix,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Array<Record<string, unknown>> = [];
    let rest = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part) as Record<string, unknown>);
    });
    try {
      const url = await eventually(async () => lines.find((line) => line.msg === 'Escalator HTTP listening')?.url, {
        what: 'the worker listening',
        timeoutMs: 30_000,
      });
      const warning = await eventually(
        async () => lines.find((line) => String(line.msg).startsWith('Render isolation is not available')),
        { what: 'the warning that isolation is not available', timeoutMs: 15_000 },
      );
      expect(warning).toMatchObject({
        level: 40,
        mode: 'namespace',
        reason: 'unshare: unshare failed: Operation not permitted',
      });
      const ready = (await (await fetch(`${String(url)}/readyz`)).json()) as { checks: Record<string, string> };
      expect(ready.checks.renderIsolation).toMatch(
        /^namespace, not available on this worker \(unshare: unshare failed/,
      );
      expect(lines.filter((line) => line.mode === 'proxy' || String(line.msg).includes('proxy (ESCALATOR'))).toEqual(
        [],
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      const redis = new Redis(redisUrl);
      await deleteKeys(redis, `${prefix}:*`);
      redis.disconnect();
    }
  }, 90_000);
});
