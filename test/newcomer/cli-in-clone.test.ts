/**
 * The `escalator` command in a fresh clone, as README.md says to run it there:
 * `npm run escalator -- …`. (`npx escalator` in the clone makes npm install the clone into its
 * npx cache on the first call: 54 s to 1 min 46 s measured; README.md says so.) The commands are
 * loaded only when run, so `--help` answers without loading any of them.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');

describe('escalator in the clone', () => {
  it('runs as README.md says, in seconds, and its help lists every command', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## The `escalator` command'), readme.indexOf('## Commands in'));
    expect(section).toContain('`npm run escalator -- --help`');

    const started = Date.now();
    const help = await run('npm', ['run', '--silent', 'escalator', '--', '--help'], { cwd: root });
    // Generous for a loaded machine; an npx-style install of the clone takes a minute or more.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(help.stdout).toContain('Usage: escalator <command> [options]');
    for (const name of ['set-image', 'diff', 'validate-config', 'token', 'agent-key'])
      expect(help.stdout).toContain(`  ${name}`);

    // A command's own help, and a command, load that command.
    const own = await run('npm', ['run', '--silent', 'escalator', '--', 'help', 'validate-config'], { cwd: root });
    expect(own.stdout).toContain('Usage: escalator validate-config');
    const validated = await run(
      'npm',
      ['run', '--silent', 'escalator', '--', 'validate-config', 'examples/gitops-repo/.github/escalator.yml'],
      { cwd: root },
    );
    expect(validated.stdout).toContain('examples/gitops-repo/.github/escalator.yml');
  }, 120_000);
});
