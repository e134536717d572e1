/**
 * The sandbox's agent settings are merged into a `--repo` folder's configuration by meaning: an
 * environment that already has `health:` keeps one `health:` key (the simulated agent's object,
 * with the user's other health settings as written), every other byte stays, and a configuration
 * with a problem is refused before anything is copied, with the file, line and fix.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeAgentHealth, SeededConfigError, withAgentHealth } from '@escalator/github-sandbox/agents';
import { configPath, parseRepoConfig, repoConfigProblems } from '../../src/config/repo-config.js';

const root = join(import.meta.dirname, '../..');
const folders: string[] = [];
const seedConfig = { path: configPath, problems: repoConfigProblems };
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function gitopsFolder(config: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'seed-test-'));
  folders.push(dir);
  cpSync(join(root, 'examples/gitops-repo/apps'), join(dir, 'apps'), { recursive: true });
  mkdirSync(join(dir, '.github'));
  writeFileSync(join(dir, '.github/escalator.yml'), config);
  return dir;
}

// As docs/health.md invites: one environment with its own health (a Flux Kustomization and a tolerate).
const withHealth = `# ours
environments:
  - name: dev   # first
    paths: ["apps/*/overlays/dev"]
    from: registry
    autoMerge: true
  - name: staging
    health:
      flux: flux-system/apps-staging   # our cluster
      tolerate: 2m
    paths: ["apps/*/overlays/staging"]
    from: dev
  - name: prod
    health: { argocd: "prod/{app}", timeout: 30m }
    paths: ["apps/*/overlays/prod"]
    from: staging
images:
  - name: ghcr.io/example/hello
    policy: semver
`;

describe('the sandbox seeds its agent settings into a --repo configuration', () => {
  it("keeps one health key per environment, the user's other settings and every other byte", () => {
    const { text, environments } = mergeAgentHealth(withHealth, 'argocd', ['hello', 'world']);
    expect(environments).toEqual(['dev', 'staging', 'prod']);
    expect(text).toBe(`# ours
environments:
  - name: dev   # first
    health: { argocd: "{app}-dev" }
    paths: ["apps/*/overlays/dev"]
    from: registry
    autoMerge: true
  - name: staging
    health:
      { argocd: "{app}-staging", tolerate: 2m }
    paths: ["apps/*/overlays/staging"]
    from: dev
  - name: prod
    health: { argocd: "{app}-prod", timeout: 30m }
    paths: ["apps/*/overlays/prod"]
    from: staging
images:
  - name: ghcr.io/example/hello
    policy: semver
`);
    const parsed = parseRepoConfig(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(
      parsed.config.environments.map((e) => [e.name, e.health?.argocd, e.health?.flux, e.health?.tolerate]),
    ).toEqual([
      ['dev', '{app}-dev', undefined, '60s'],
      ['staging', '{app}-staging', undefined, '2m'],
      ['prod', '{app}-prod', undefined, '60s'],
    ]);
  });

  it('seeds a copy for Flux and leaves the folder as it was', () => {
    const dir = gitopsFolder(withHealth);
    const seeded = withAgentHealth(dir, 'flux', seedConfig);
    try {
      expect(readFileSync(join(dir, '.github/escalator.yml'), 'utf8')).toBe(withHealth);
      const text = readFileSync(join(seeded.dir, '.github/escalator.yml'), 'utf8');
      expect(text.match(/health:/g)).toHaveLength(3);
      expect(text).toContain('health:\n      { flux: "flux-system/apps-staging", tolerate: 2m }\n');
      expect(parseRepoConfig(text).ok).toBe(true);
      expect(seeded.objects.map((o) => o.object)).toEqual([
        'flux-system/apps-dev',
        'flux-system/apps-staging',
        'flux-system/apps-prod',
      ]);
    } finally {
      seeded.remove();
    }
  });

  it('refuses a configuration with a problem, naming the file, the line and the fix', () => {
    const dir = gitopsFolder(withHealth.replace('    from: dev\n', '    from: dev\n    soak: 10 minutes\n'));
    let error: unknown;
    try {
      withAgentHealth(dir, 'argocd', seedConfig);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SeededConfigError);
    const message = (error as Error).message;
    expect(message).toContain(
      `${join(dir, '.github/escalator.yml')}:13:11: invalid duration "10 minutes" (write a whole number and a unit`,
    );
    expect(message).toContain(`npm run escalator -- validate-config ${join(dir, '.github/escalator.yml')}`);
  });
});
