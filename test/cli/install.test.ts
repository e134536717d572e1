/**
 * The way README.md documents to run `escalator` in any folder: a global install from the clone.
 * Installed into a private prefix, then run in another folder, as a GitOps repository would be.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = realpathSync(join(import.meta.dirname, '../..'));
const work = mkdtempSync(join(tmpdir(), 'escalator-install-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('escalator installed from the clone', () => {
  it('is the package escalator-gitops, and runs validate-config in another folder', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## The `escalator` command'), readme.indexOf('## Commands in'));
    expect(section).toContain('npm ci && npm install -g .');

    // `npm install -g .` in the clone, with a private prefix instead of the user's global one
    // (offline: nothing may come from the registry; scripts off: `npm ci` built dist/ already).
    const prefix = join(work, 'prefix');
    await run(
      'npm',
      ['install', '-g', '.', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        cwd: root,
      },
    );
    expect(existsSync(join(prefix, 'lib/node_modules/escalator-gitops/package.json'))).toBe(true);
    expect(existsSync(join(prefix, 'lib/node_modules/escalator'))).toBe(false);
    expect(realpathSync(join(prefix, 'lib/node_modules/escalator-gitops'))).toBe(root);

    const gitops = join(work, 'my-gitops-repo');
    mkdirSync(join(gitops, '.github'), { recursive: true });
    cpSync(join(root, 'examples/gitops-repo/.github/escalator.yml'), join(gitops, '.github/escalator.yml'));
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` };
    const valid = await run('escalator', ['validate-config', '.github/escalator.yml'], { cwd: gitops, env });
    expect(valid.stdout).toBe('.github/escalator.yml: valid (3 environments)\n');

    writeFileSync(join(gitops, '.github/escalator.yml'), 'environments:\n  - name: dev\n    paths: []\n');
    const invalid = await run('escalator', ['validate-config', '.github/escalator.yml'], { cwd: gitops, env }).then(
      () => ({ code: 0, stderr: '', stdout: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(invalid.code).not.toBe(0);
    expect(`${invalid.stdout}${invalid.stderr}`).toContain('.github/escalator.yml:');
  });
});
