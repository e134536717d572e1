import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Throwaway git repositories for the render and diff tests: git run with no user or system
 * configuration (HOME is `home`), and a repository built one commit per entry.
 */
export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t.invalid',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t.invalid',
  };
}

/** Runs git in `dir` with `env`; its standard output, trimmed. */
export function runGit(env: NodeJS.ProcessEnv, dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString('utf8')
    .trim();
}

/**
 * A new repository under `scratch` (branch main) with one commit per entry: each file is written
 * (`symlink:<target>` makes a symbolic link) or, for `null`, deleted. Its folder and the commits' SHAs.
 */
export function repoWith(
  scratch: string,
  ...commits: Array<Record<string, string | null>>
): { dir: string; shas: string[] } {
  const env = gitEnv(scratch);
  const dir = mkdtempSync(join(scratch, 'repo-'));
  runGit(env, dir, 'init', '-q', '-b', 'main');
  const shas: string[] = [];
  for (const files of commits) {
    for (const [path, content] of Object.entries(files)) {
      const full = join(dir, path);
      rmSync(full, { force: true, recursive: true });
      if (content === null) continue;
      mkdirSync(dirname(full), { recursive: true });
      if (content.startsWith('symlink:')) symlinkSync(content.slice('symlink:'.length), full);
      else writeFileSync(full, content);
    }
    runGit(env, dir, 'add', '-A');
    runGit(env, dir, 'commit', '-q', '--allow-empty', '-m', `c${shas.length}`);
    shas.push(runGit(env, dir, 'rev-parse', 'HEAD'));
  }
  return { dir, shas };
}
