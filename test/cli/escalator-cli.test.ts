import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { planBump } from '../../src/planners/bump-plan.js';

const digest = `sha256:${'ab'.repeat(32)}`;
const kustomization = `# dev overlay\r\nimages:\r\n  - name: ghcr.io/example/hello # the app\r\n    newTag: "1.0"\r\n`;
const values = 'image:\n  repository: ghcr.io/example/hello\n  tag: 1.0.0\n';
const template =
  'apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n';

async function cli(argv: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
  return { code, stdout, stderr };
}

describe('escalator set-image', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'escalator-cli-'));
    mkdirSync(join(dir, 'overlays/dev'), { recursive: true });
    mkdirSync(join(dir, 'chart/templates'), { recursive: true });
    writeFileSync(join(dir, 'overlays/dev/kustomization.yaml'), kustomization);
    writeFileSync(join(dir, 'chart/Chart.yaml'), 'apiVersion: v2\nname: hello\nversion: 0.1.0\n');
    writeFileSync(join(dir, 'chart/values.yaml'), values);
    writeFileSync(join(dir, 'chart/templates/deployment.yaml'), template);
    writeFileSync(join(dir, 'unrelated.yaml'), 'image: ghcr.io/example/other:2.0\n');
  });

  it('rewrites only the changed values, in place, across a directory tree, adding the digest with --pin-digest', async () => {
    const result = await cli(['set-image', `ghcr.io/example/hello:1.2.3@${digest}`, '.', '--pin-digest'], dir);
    expect(result.code).toBe(0);
    // CRLF, comments and the double quotes survive; the chart template is not touched.
    expect(readFileSync(join(dir, 'overlays/dev/kustomization.yaml'), 'utf8')).toBe(
      kustomization.replace('newTag: "1.0"\r\n', `newTag: "1.2.3"\r\n    digest: "${digest}"\r\n`),
    );
    expect(readFileSync(join(dir, 'chart/values.yaml'), 'utf8')).toBe(
      values.replace('tag: 1.0.0', `tag: 1.2.3@${digest}`),
    );
    expect(readFileSync(join(dir, 'chart/templates/deployment.yaml'), 'utf8')).toBe(template);
    expect(readFileSync(join(dir, 'unrelated.yaml'), 'utf8')).toBe('image: ghcr.io/example/other:2.0\n');
    expect(result.stdout).toContain('2 files changed, 0 already current, 0 refused');
  });

  it.each([false, true])(
    'writes what the App writes for the same image and images[].pinDigest: %s (issue 32, cause 7)',
    async (pinDigest) => {
      writeFileSync(join(dir, 'pinned.yaml'), `image: ghcr.io/example/hello:1.0@sha256:${'cd'.repeat(32)}\n`);
      const paths = ['overlays/dev/kustomization.yaml', 'chart/values.yaml', 'pinned.yaml', 'unrelated.yaml'];
      const files = paths.map((path) => ({ path, text: readFileSync(join(dir, path), 'utf8') }));
      const plan = planBump({
        environment: 'dev',
        app: 'hello',
        files,
        images: [
          {
            image: { repository: 'ghcr.io/example/hello', tag: '1.2.3', digest },
            policy: { policy: 'newest', pinDigest },
          },
        ],
      });
      const flags = pinDigest ? ['--pin-digest'] : [];
      const result = await cli(['set-image', `ghcr.io/example/hello:1.2.3@${digest}`, ...paths, ...flags], dir);
      expect(result.code).toBe(0);
      expect(plan.updates.length).toBe(3);
      for (const update of plan.updates) expect(readFileSync(join(dir, update.path), 'utf8')).toBe(update.content);
    },
  );

  it('writes only the images: entry where it sets what renders, not the manifests it overrides (issue 32, cause 8)', async () => {
    const deployment =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          image: ghcr.io/example/hello:1.0\n';
    writeFileSync(join(dir, 'overlays/dev/deployment.yaml'), deployment);
    writeFileSync(join(dir, 'overlays/dev/kustomization.yaml'), `resources:\n  - deployment.yaml\n${kustomization}`);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'overlays'], dir);
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'overlays/dev/deployment.yaml'), 'utf8')).toBe(deployment);
    expect(readFileSync(join(dir, 'overlays/dev/kustomization.yaml'), 'utf8')).toBe(
      `resources:\n  - deployment.yaml\n${kustomization.replace('newTag: "1.0"', 'newTag: "1.2.3"')}`,
    );
    expect(result.stdout).toContain('1 file changed, 0 already current, 0 refused');
  });

  it('refuses both kustomizations of a directory that holds two, as kustomize does (issue 32, cause 3)', async () => {
    writeFileSync(join(dir, 'overlays/dev/kustomization.yml'), kustomization);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'overlays'], dir);
    expect(result.code).toBe(2);
    expect(readFileSync(join(dir, 'overlays/dev/kustomization.yaml'), 'utf8')).toBe(kustomization);
    expect(readFileSync(join(dir, 'overlays/dev/kustomization.yml'), 'utf8')).toBe(kustomization);
    expect(result.stderr).toContain(
      'overlays/dev/kustomization.yaml:1: refused: kustomize cannot build this directory: overlays/dev/kustomization.yaml and overlays/dev/kustomization.yml are both kustomizations of it',
    );
    expect(result.stdout).toContain('0 files changed, 0 already current, 2 refused');
  });

  it.each([[[]], [['--no-new-pins']]])(
    'writes a digest given only where a file already pins one, as the App does by default (issue 32, cause 7) %j',
    async (flags) => {
      writeFileSync(join(dir, 'pinned.yaml'), `image: ghcr.io/example/hello:1.0@sha256:${'cd'.repeat(32)}\n`);
      const result = await cli(['set-image', `ghcr.io/example/hello:1.2.3@${digest}`, '.', ...flags], dir);
      expect(result.code).toBe(0);
      expect(readFileSync(join(dir, 'overlays/dev/kustomization.yaml'), 'utf8')).toBe(
        kustomization.replace('newTag: "1.0"', 'newTag: "1.2.3"'),
      );
      expect(readFileSync(join(dir, 'chart/values.yaml'), 'utf8')).toBe(values.replace('tag: 1.0.0', 'tag: 1.2.3'));
      expect(readFileSync(join(dir, 'pinned.yaml'), 'utf8')).toBe(`image: ghcr.io/example/hello:1.2.3@${digest}\n`);
      expect(result.stdout).toContain('3 files changed, 0 already current, 0 refused');
    },
  );

  it('refuses a pinned file when the image given has no digest, in the words of the command line', async () => {
    writeFileSync(join(dir, 'pinned.yaml'), `image: ghcr.io/example/hello:1.0@sha256:${'cd'.repeat(32)}\n`);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'pinned.yaml'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'pinned.yaml:1: refused: image pins a digest but the image given has none; give it as ghcr.io/example/hello:1.2.3@sha256:… (or remove the pin)\n',
    );
    expect(result.stderr).not.toContain('event');
  });

  it('writes the good entries beside a bad one, prints the one left with its line and reason, and exits 2', async () => {
    const twoMaps = `image:\n  repository: ghcr.io/example/hello\n  tag: 1.0.0\nworker:\n  image:\n    repository: ghcr.io/example/hello\n    tag: 1.0.0\n    digest: sha256:${'cd'.repeat(32)}\n`;
    writeFileSync(join(dir, 'chart/values.yaml'), twoMaps);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'chart'], dir);
    expect(result.code).toBe(2);
    expect(readFileSync(join(dir, 'chart/values.yaml'), 'utf8')).toBe(twoMaps.replace('tag: 1.0.0', 'tag: 1.2.3'));
    expect(result.stdout).toBe(
      'changed   chart/values.yaml:3  image.tag  1.0.0 → 1.2.3\n1 file changed, 0 already current, 0 refused, 1 entry left (2 YAML files scanned)\n',
    );
    expect(result.stderr).toBe(
      'chart/values.yaml:7: left: worker.image pins a digest but the image given has none; give it as ghcr.io/example/hello:1.2.3@sha256:… (or remove the pin) (the rest of the file was written)\n',
    );
    const json = await cli(['set-image', 'ghcr.io/example/hello:1.2.4', 'chart', '--json'], dir);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      changed: [{ path: 'chart/values.yaml', field: 'image.tag', line: 3, from: '1.2.3', to: '1.2.4' }],
      refused: [],
      left: [{ path: 'chart/values.yaml', line: 7 }],
    });
  });

  it('skips the template documents of a multi-document file with one line each and edits the rest', async () => {
    const stream =
      'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: ghcr.io/example/hello:1.0.0\n---\n{{- if .Values.worker }}\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: ghcr.io/example/hello:{{ .Values.tag }}\n{{- end }}\n';
    writeFileSync(join(dir, 'stream.yaml'), stream);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'stream.yaml'], dir);
    expect(result.code).toBe(2);
    expect(readFileSync(join(dir, 'stream.yaml'), 'utf8')).toBe(stream.replace('hello:1.0.0', 'hello:1.2.3'));
    expect(result.stderr).toBe(
      'stream.yaml:7: left: document 2 is a Go/Helm template ({{ … }} at line 7), not YAML data, so it was skipped and the other documents were read; edit the values the template reads (the rest of the file was written)\n',
    );
    // Only template documents name the image: nothing can be edited, and that is a refusal.
    writeFileSync(join(dir, 'only.yaml'), `apiVersion: v1\nkind: ConfigMap\n${stream.slice(stream.indexOf('---'))}`);
    const only = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'only.yaml'], dir);
    expect(only.code).toBe(2);
    expect(only.stderr).toBe(
      'only.yaml:4: refused: document 2 is a Go/Helm template ({{ … }} at line 4), not YAML data, so it was skipped and the other documents were read; edit the values the template reads\n',
    );
  });

  it('with --flux-policy writes the fields marked for that policy, renaming them, and leaves other policies alone', async () => {
    const marked =
      'apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: docker.io/example/hello:1.0.0 # {"$imagepolicy": "flux-system:hello"}\n      - image: ghcr.io/example/hello:1.0.0 # {"$imagepolicy": "flux-system:canary"}\n';
    writeFileSync(join(dir, 'marked.yaml'), marked);
    const result = await cli(
      ['set-image', 'ghcr.io/example/hello:1.2.3', 'marked.yaml', '--flux-policy', 'flux-system:hello'],
      dir,
    );
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'marked.yaml'), 'utf8')).toBe(
      marked.replace('docker.io/example/hello:1.0.0', 'ghcr.io/example/hello:1.2.3'),
    );
    const bad = await cli(
      ['set-image', 'ghcr.io/example/hello:1.2.3', '.', '--flux-policy', 'flux-system:hello:tag'],
      dir,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--flux-policy "flux-system:hello:tag" is not <namespace>:<name>');
  });

  it('refuses literal dotted keys with their line, and edits them with --helm-dotted-keys', async () => {
    writeFileSync(join(dir, 'chart/values.yaml'), 'image.name: ghcr.io/example/hello\nimage.tag: 1.0.0\n');
    const refused = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'chart'], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('chart/values.yaml:2: refused: cannot edit the top level: "image.tag" is one key');
    expect(refused.stderr).toContain('set helmDottedKeys: true on the image');
    const edited = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'chart', '--helm-dotted-keys'], dir);
    expect(edited.code).toBe(0);
    expect(readFileSync(join(dir, 'chart/values.yaml'), 'utf8')).toBe(
      'image.name: ghcr.io/example/hello\nimage.tag: 1.2.3\n',
    );
  });

  it('with --add-entries adds an images: entry to the overlay that renders the image through its base', async () => {
    mkdirSync(join(dir, 'app/base'), { recursive: true });
    mkdirSync(join(dir, 'app/overlays/prod'), { recursive: true });
    writeFileSync(join(dir, 'app/base/kustomization.yaml'), 'resources:\n- deployment.yaml\n');
    writeFileSync(
      join(dir, 'app/base/deployment.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: ghcr.io/example/hello:1.0.0\n',
    );
    writeFileSync(join(dir, 'app/overlays/prod/kustomization.yaml'), 'resources:\n  - ../../base\n');
    const without = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'app/overlays'], dir);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('no file under app/overlays sets ghcr.io/example/hello');
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'app/overlays', '--add-entries'], dir);
    expect(result.code).toBe(0);
    // The base is read to know what the overlay renders, and left as it is.
    expect(readFileSync(join(dir, 'app/base/deployment.yaml'), 'utf8')).toContain('hello:1.0.0');
    expect(readFileSync(join(dir, 'app/overlays/prod/kustomization.yaml'), 'utf8')).toBe(
      'resources:\n  - ../../base\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.2.3\n',
    );
    expect(result.stdout).toBe(
      'changed   app/overlays/prod/kustomization.yaml:4  images[0].name  (unset) → ghcr.io/example/hello\nchanged   app/overlays/prod/kustomization.yaml:5  images[0].newTag  (unset) → 1.2.3\n1 file changed, 0 already current, 0 refused (1 YAML file scanned)\n',
    );
    // Run again: the entry is there and current.
    const again = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'app/overlays', '--add-entries'], dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 files changed, 1 already current');
  });

  it('exits 2 and says so when no file sets the image', async () => {
    const result = await cli(['set-image', 'ghcr.io/example/helo:1.2.3', '.'], dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('0 files changed, 0 already current, 0 refused (4 YAML files scanned)\n');
    expect(result.stderr).toBe(
      'no file under . sets ghcr.io/example/helo (4 YAML files scanned; an image a kustomization renames with newName counts as the new name), so nothing was changed; check the image name (any spelling matches: nginx is docker.io/library/nginx) and the path\n',
    );
    const json = await cli(['set-image', 'ghcr.io/example/helo:1.2.3', '.', '--json'], dir);
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('no file under . sets ghcr.io/example/helo');
  });

  it('reads a kustomization named Kustomization when it walks a directory', async () => {
    mkdirSync(join(dir, 'overlays/prod'));
    writeFileSync(
      join(dir, 'overlays/prod/Kustomization'),
      'images:\n- name: ghcr.io/example/hello\n  newTag: 1.0.0\n',
    );
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'overlays'], dir);
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'overlays/prod/Kustomization'), 'utf8')).toBe(
      'images:\n- name: ghcr.io/example/hello\n  newTag: 1.2.3\n',
    );
    expect(result.stdout).toContain('changed   overlays/prod/Kustomization:3  images[0].newTag  1.0.0 → 1.2.3');
  });

  it('leaves an image a kustomization renames to a mirror alone, and says no file sets it', async () => {
    mkdirSync(join(dir, 'mirror'));
    const deployment =
      'apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - image: alpine:1.8.0\n';
    writeFileSync(join(dir, 'mirror/deployment.yaml'), deployment);
    writeFileSync(
      join(dir, 'mirror/kustomization.yaml'),
      'resources: [deployment.yaml]\nimages:\n- name: alpine\n  newName: myprivaterepohostname:1234/my/cool-alpine\n',
    );
    const upstream = await cli(['set-image', 'alpine:1.9.0', 'mirror'], dir);
    expect(upstream.code).toBe(2);
    expect(upstream.stderr).toContain('no file under mirror sets docker.io/library/alpine');
    expect(readFileSync(join(dir, 'mirror/deployment.yaml'), 'utf8')).toBe(deployment);
    // The mirror's own event sets the version where kustomize renders it: a newTag on the entry.
    const mirror = await cli(['set-image', 'myprivaterepohostname:1234/my/cool-alpine:1.9.0', 'mirror'], dir);
    expect(mirror.code).toBe(0);
    expect(readFileSync(join(dir, 'mirror/kustomization.yaml'), 'utf8')).toBe(
      'resources: [deployment.yaml]\nimages:\n- name: alpine\n  newName: myprivaterepohostname:1234/my/cool-alpine\n  newTag: 1.9.0\n',
    );
  });

  it('prints a unified diff with --dry-run and writes nothing', async () => {
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'chart', '--dry-run'], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      '--- a/chart/values.yaml\n+++ b/chart/values.yaml\n@@ -1,3 +1,3 @@\n image:\n   repository: ghcr.io/example/hello\n-  tag: 1.0.0\n+  tag: 1.2.3\n',
    );
    expect(readFileSync(join(dir, 'chart/values.yaml'), 'utf8')).toBe(values);
  });

  it('reports changed, unchanged and refused files as JSON, and exits 2 on a refusal', async () => {
    writeFileSync(
      join(dir, 'overlays/dev/extra.yaml'),
      'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - image: ghcr.io/example/hello:${TAG}\n',
    );
    await cli(['set-image', 'ghcr.io/example/hello:1.2.3', 'chart'], dir);
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.', '--json'], dir);
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as {
      changed: Array<{ path: string; from: string; to: string }>;
      unchanged: string[];
      refused: Array<{ path: string; reason: string }>;
    };
    expect(report.changed).toEqual([
      expect.objectContaining({ path: 'overlays/dev/kustomization.yaml', from: '1.0', to: '1.2.3' }),
    ]);
    expect(report.unchanged).toEqual(['chart/values.yaml']);
    expect(report.refused).toEqual([
      { path: 'overlays/dev/extra.yaml', reason: expect.stringContaining('placeholder'), line: 5 },
    ]);
    expect(readFileSync(join(dir, 'overlays/dev/extra.yaml'), 'utf8')).toContain('${TAG}');
  });

  it('refuses a file that is not UTF-8 and mentions the image, leaving its bytes alone; one that does not mention it is skipped', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('# caf'),
      Buffer.from([0xe9]),
      Buffer.from('\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n'),
    ]);
    mkdirSync(join(dir, 'overlays/latin1'));
    writeFileSync(join(dir, 'overlays/latin1/kustomization.yaml'), latin1);
    writeFileSync(
      join(dir, 'other-latin1.yaml'),
      Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\nimage: ghcr.io/example/other:2.0\n')]),
    );
    const result = await cli(['set-image', 'ghcr.io/example/hello:1.2.3', '.', '--json'], dir);
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as { refused: Array<{ path: string; reason: string }> };
    expect(report.refused).toEqual([
      {
        path: 'overlays/latin1/kustomization.yaml',
        reason:
          'the file is not UTF-8 text (an invalid byte near byte 5); Escalator reads and rewrites only UTF-8 files, as rewriting it would change bytes it does not own. Save it as UTF-8',
      },
    ]);
    expect(readFileSync(join(dir, 'overlays/latin1/kustomization.yaml'))).toEqual(latin1);
  });

  it.each([
    [['set-image', 'ghcr.io/example/hello', '.'], 'has no tag'],
    [['set-image', 'Ghcr.io/Example/Hello:1.0', '.'], 'is not a valid image reference'],
    [['set-image', 'ghcr.io/example/hello:1.0'], 'needs an image and at least one path'],
    [['set-image', 'ghcr.io/example/hello:1.0', 'missing-dir'], 'no such file or directory: missing-dir'],
    [['set-image', 'ghcr.io/example/hello:1.0', '.', '--force'], 'unknown option --force'],
    [['set-image', 'ghcr.io/example/hello:1.0', '.', '--pin-digest', '--no-new-pins'], 'contradict each other'],
  ])('exits 2 with a reason for %j', async (argv, message) => {
    const result = await cli(argv, dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('escalator set-image --help');
  });
});

describe('escalator validate-config', () => {
  it('prints every problem as file:line:col and exits 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalator-cli-'));
    writeFileSync(
      join(dir, 'escalator.yml'),
      'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registy\n    automerge: true\n',
    );
    const result = await cli(['validate-config', 'escalator.yml'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      [
        'escalator.yml:1:1: no environment takes new images from "registry" (set from: registry on the first environment, "dev")',
        'escalator.yml:4:11: from names no environment: "registy" (did you mean "registry"?)',
        'escalator.yml:5:5: unknown key "automerge" (did you mean "autoMerge"?)',
        '',
      ].join('\n'),
    );
  });

  it('accepts the example repository config', async () => {
    const result = await cli(['validate-config', 'examples/gitops-repo/.github/escalator.yml'], process.cwd());
    expect(result).toEqual({
      code: 0,
      stdout: 'examples/gitops-repo/.github/escalator.yml: valid (3 environments)\n',
      stderr: '',
    });
  });
});

describe('escalator --help and the installed command', () => {
  it('lists the commands, and each has its own help', async () => {
    const help = await cli(['--help'], process.cwd());
    expect(help.code).toBe(0);
    for (const name of ['set-image', 'diff', 'validate-config']) expect(help.stdout).toContain(`  ${name}`);
    expect((await cli(['set-image', '--help'], process.cwd())).stdout).toContain(
      'Usage: escalator set-image <image> <path…>',
    );
    const unknown = await cli(['frobnicate'], process.cwd());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('runs as `npx escalator` from the bin that `npm ci` builds', () => {
    expect(existsSync('dist/main/cli.js'), 'dist/ is missing: npm ci builds it (prepare), or run npm run build').toBe(
      true,
    );
    const run = spawnSync(process.execPath, ['bin/escalator.js', '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });
});
