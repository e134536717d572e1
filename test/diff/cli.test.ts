import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { diffHelp, runDiff } from '../../src/cli/diff.js';
import { UsageError, type CliIo } from '../../src/cli/io.js';
import { buildCaseRepo } from './support/case-repo.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/diff/', import.meta.url));
const cacheDir = mkdtempSync(join(tmpdir(), 'escalator-diff-cli-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function io(cwd: string): CliIo & { out: string; err: string } {
  const result = {
    out: '',
    err: '',
    cwd,
    stdout: (text: string) => (result.out += text),
    stderr: (text: string) => (result.err += text),
  };
  return result;
}

describe('escalator diff', () => {
  it('prints exactly the comment of the golden case', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'configmap-generator'));
    try {
      const out = io(repo.dir);
      expect(
        await runDiff(
          ['--base', repo.base, '--head', 'main', '--repository', 'example/gitops', '--cache-dir', cacheDir],
          out,
        ),
      ).toBe(0);
      expect(out.out).toBe(readFileSync(join(FIXTURES, 'configmap-generator/expected.md'), 'utf8'));
    } finally {
      repo.cleanup();
    }
  });

  it('prints JSON with targets, objects by change kind, Secret keys and failures — and exits 0 although a target fails', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'secrets'));
    try {
      const out = io('/');
      expect(
        await runDiff(
          ['--repo', repo.dir, '--base', repo.base, '--head', repo.head, '--format', 'json', '--cache-dir', cacheDir],
          out,
        ),
      ).toBe(0);
      expect(out.out).not.toContain('CANARY');
      const report = JSON.parse(out.out);
      expect(report.summary).toMatchObject({ targetsChecked: 3, failures: 1, secretsChanged: 2 });
      const cache = report.targets.find((target: { id: string }) => target.id === 'apps/cache');
      expect(cache.failure).toMatchObject({ side: 'head', breaks: true });
      const db = report.targets.find((target: { id: string }) => target.id === 'apps/db');
      const secret = db.objects.find((object: { kind: string }) => object.kind === 'Secret');
      expect(secret).toMatchObject({
        change: 'renamed',
        renameReason: 'hash-suffix',
        name: 'db-credentials-9ddg4bg675',
      });
      expect(secret.secretKeys).toEqual([
        { key: 'API_TOKEN', change: 'changed', fromBytes: 24, toBytes: 24 },
        { key: 'NEW_KEY', change: 'added', toBytes: 21 },
        { key: 'OLD_KEY', change: 'removed', fromBytes: 21 },
        { key: 'password', change: 'changed', fromBytes: 25, toBytes: 39 },
      ]);
    } finally {
      repo.cleanup();
    }
  });

  it('renders only the --path targets', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'head-failure'));
    try {
      const out = io(repo.dir);
      expect(
        await runDiff(
          [
            '--base',
            repo.base,
            '--head',
            repo.head,
            '--path',
            'apps/blog',
            '--format',
            'json',
            '--cache-dir',
            cacheDir,
          ],
          out,
        ),
      ).toBe(0);
      expect(JSON.parse(out.out).targets.map((target: { id: string }) => target.id)).toEqual(['apps/blog']);
    } finally {
      repo.cleanup();
    }
  });

  it('refuses bad arguments and unknown revisions with a usage error', async () => {
    const out = io(FIXTURES);
    await expect(runDiff(['--head', 'x'], out)).rejects.toThrow(
      new UsageError('diff needs --base <rev> and --head <rev>'),
    );
    await expect(runDiff(['--base', 'a', '--head', 'b', '--format', 'html'], out)).rejects.toThrow(
      /--format must be markdown or json/,
    );
    await expect(runDiff(['--base', 'a', '--head', 'b', '--timeout', '0'], out)).rejects.toThrow(/--timeout/);
    await expect(runDiff(['--base', 'a', '--head', 'b', '--path'], out)).rejects.toThrow(/--path needs a value/);
    await expect(runDiff(['--base', 'a', '--head', 'b', '--frobnicate'], out)).rejects.toThrow(
      /unknown option --frobnicate/,
    );
    const repo = buildCaseRepo(join(FIXTURES, 'image-bump'));
    try {
      await expect(runDiff(['--repo', repo.dir, '--base', 'no-such-rev', '--head', repo.head], out)).rejects.toThrow(
        UsageError,
      );
    } finally {
      repo.cleanup();
    }
  });

  it('prints its help', async () => {
    const out = io('/');
    expect(await runDiff(['--help'], out)).toBe(0);
    expect(out.out).toBe(`${diffHelp}\n`);
  });
});
