import { describe, expect, it } from 'vitest';
import { planBump, renderBumpTitle } from '../../src/planners/bump-plan.js';
import { editSettingsFrom } from '../../src/planners/image-edit/index.js';
import { planEnvironmentFiles } from '../../src/planners/environment-files.js';
import { cell, code, escapeText } from '../../src/planners/markdown.js';
import { planPromotion, readVersions } from '../../src/planners/promotion-plan.js';
import { parseMarker, renderMarker, type PullMarker } from '../../src/planners/pull-marker.js';
import { acceptsTag, compareTags, isUpgrade, type TagPolicy } from '../../src/planners/tag-policy.js';

const newest: TagPolicy = { policy: 'newest', pinDigest: false };
const semver: TagPolicy = { policy: 'semver', pinDigest: false };
const digestA = `sha256:${'a'.repeat(64)}`;
const digestB = `sha256:${'b'.repeat(64)}`;

describe('tag policy', () => {
  it.each([
    [semver, '1.2.3', true],
    [semver, 'v1.2.3', true],
    [semver, 'latest', false],
    [{ ...semver, policy: 'semver-range', range: '^1.2' } as TagPolicy, '1.9.0', true],
    [{ ...semver, policy: 'semver-range', range: '^1.2' } as TagPolicy, '2.0.0', false],
    [{ ...newest, tags: '^\\d+\\.\\d+\\.\\d+$' }, '1.2.3', true],
    [{ ...newest, tags: '^\\d+\\.\\d+\\.\\d+$' }, '1.2.3-rc1', false],
    [{ ...newest, policy: 'numerical' } as TagPolicy, '20240115', true],
    [{ ...newest, policy: 'numerical' } as TagPolicy, 'abc', false],
  ])('%o accepts %s: %s', (policy, tag, ok) => {
    expect(acceptsTag(policy, tag).ok).toBe(ok);
  });

  it.each([
    [semver, '1.2.3', '1.10.0', true],
    [semver, '1.10.0', '1.9.9', false],
    [semver, '1.2.3', '1.2.3', false],
    [{ ...newest, policy: 'numerical' } as TagPolicy, '99', '100', true],
    [{ ...newest, policy: 'lexical' } as TagPolicy, 'b', 'a', false],
    [newest, 'anything', 'else', true],
    [semver, undefined, '1.0.0', true],
  ])('under %o, %s → %s is an upgrade: %s', (policy, current, candidate, upgrade) => {
    expect(isUpgrade(policy, current, candidate)).toBe(upgrade);
  });

  it('orders newest by push time and semver by version', () => {
    expect(compareTags(newest, { tag: 'a', at: '2026-01-02' }, { tag: 'b', at: '2026-01-01' })).toBeGreaterThan(0);
    expect(compareTags(semver, { tag: '1.10.0', at: '1' }, { tag: '1.9.0', at: '2' })).toBeGreaterThan(0);
  });
});

describe('the pull request marker', () => {
  it('round-trips through a body, even with text around it', () => {
    const marker: PullMarker = {
      kind: 'bump',
      environment: 'dev',
      app: 'hello',
      images: [{ repository: 'ghcr.io/x/y', tag: '1.0.0', digest: digestA }],
    };
    expect(parseMarker(`hello\n${renderMarker(marker)}\nbye`)).toEqual(marker);
  });
  it('cannot be closed early by a value containing -->', () => {
    const marker: PullMarker = { kind: 'bump', environment: 'dev', app: 'a-->b', images: [] };
    const rendered = renderMarker(marker);
    expect(rendered.indexOf('-->')).toBe(rendered.length - 3);
    expect(parseMarker(rendered)).toEqual(marker);
  });
  it('ignores bodies without one, or with a forged shape', () => {
    expect(parseMarker('no marker')).toBeNull();
    expect(parseMarker('<!-- escalator:v1 {"kind":"evil"} -->')).toBeNull();
  });
});

describe('environment files', () => {
  const config = {
    environments: [
      { name: 'dev', paths: ['apps/*/overlays/dev'] },
      { name: 'prod', paths: ['clusters/prod/values.yaml'] },
    ],
  } as never;
  it('binds the app from the path and skips chart templates and non-YAML', () => {
    expect(
      planEnvironmentFiles(config, [
        'apps/hello/overlays/dev/kustomization.yaml',
        'apps/hello/overlays/dev/patch.yml',
        'apps/hello/overlays/dev/README.md',
        'apps/hello/overlays/dev/templates/x.yaml',
        'clusters/prod/values.yaml',
        'apps/hello/base/deployment.yaml',
      ]),
    ).toEqual([
      { environment: 'dev', app: 'hello', path: 'apps/hello/overlays/dev/kustomization.yaml' },
      { environment: 'dev', app: 'hello', path: 'apps/hello/overlays/dev/patch.yml' },
      { environment: 'prod', app: '', path: 'clusters/prod/values.yaml' },
    ]);
  });
});

describe('planBump', () => {
  const file = {
    path: 'apps/hello/overlays/dev/kustomization.yaml',
    text: 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0 # keep\n  - name: ghcr.io/example/world\n    newTag: 2.0.0\n',
  };

  it('writes several images into one file in one plan', () => {
    const plan = planBump({
      environment: 'dev',
      app: 'hello',
      files: [file],
      images: [
        { image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: semver },
        { image: { repository: 'ghcr.io/example/world', tag: '2.1.0' }, policy: semver },
      ],
    });
    expect(plan.updates).toEqual([
      {
        path: file.path,
        content:
          'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.1.0 # keep\n  - name: ghcr.io/example/world\n    newTag: 2.1.0\n',
      },
    ]);
    expect(plan.title).toBe('Bump 2 images in dev (hello)');
    expect(plan.branch).toBe('escalator/dev/hello');
    expect(parseMarker(plan.body)?.images.map((i) => i.tag)).toEqual(['1.1.0', '2.1.0']);
  });

  it('reports one unparseable kustomization once, whatever the parser and the images (issue 32, cause 9)', () => {
    const broken = { path: file.path, text: 'images:\n\t- name: ghcr.io/example/hello\n  newTag: 1.0.0\n  # world\n' };
    const plan = planBump({
      environment: 'dev',
      app: 'hello',
      files: [broken],
      images: [
        { image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: semver },
        { image: { repository: 'ghcr.io/example/world', tag: '2.1.0' }, policy: semver },
      ],
    });
    expect(plan.updates).toEqual([]);
    expect(plan.refused).toEqual([
      {
        path: file.path,
        line: 2,
        reason:
          'the file is not valid YAML (parse error at line 2: Tabs are not allowed as indentation); fix the syntax first. (2 more parse errors after it, usually caused by this one)',
      },
    ]);
  });

  it('never moves backwards under semver', () => {
    const plan = planBump({
      environment: 'dev',
      app: 'hello',
      files: [file],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '0.9.0' }, policy: semver }],
    });
    expect(plan.updates).toEqual([]);
    expect(plan.current).toEqual([file.path]);
  });

  it('keeps earlier images of the living PR in its marker and title', () => {
    const existing: PullMarker = {
      kind: 'bump',
      environment: 'dev',
      app: 'hello',
      images: [{ repository: 'ghcr.io/example/world', tag: '2.1.0' }],
    };
    const plan = planBump({
      environment: 'dev',
      app: 'hello',
      files: [file],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: newest }],
      existing,
    });
    expect(plan.marker.images.map((i) => `${i.repository}:${i.tag}`)).toEqual([
      'ghcr.io/example/hello:1.1.0',
      'ghcr.io/example/world:2.1.0',
    ]);
  });

  describe('when the branch already holds the tag but the marker names an older one', () => {
    // A run that moved the branch and was stopped before it updated the pull request's text (its
    // write budget spent) runs again: nothing to write, and the title must follow the files.
    const existing: PullMarker = {
      kind: 'bump',
      environment: 'dev',
      app: 'hello',
      images: [{ repository: 'ghcr.io/example/hello', tag: '1.0.0' }],
    };
    const moved = { ...file, text: file.text.replace('1.0.0', '1.3.0') };

    it('writes nothing and names the tag the files hold in marker and title', () => {
      const plan = planBump({
        environment: 'dev',
        app: 'hello',
        files: [moved],
        images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.3.0' }, policy: semver }],
        existing,
      });
      expect(plan.updates).toEqual([]);
      expect(plan.marker.images).toEqual([{ repository: 'ghcr.io/example/hello', tag: '1.3.0' }]);
      expect(plan.title).toBe('Bump hello to 1.3.0 in dev');
    });

    it('keeps the marker when the event is older than what the files hold', () => {
      const plan = planBump({
        environment: 'dev',
        app: 'hello',
        files: [moved],
        images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.2.0' }, policy: semver }],
        existing,
      });
      expect(plan.updates).toEqual([]);
      expect(plan.marker.images).toEqual(existing.images);
    });
  });

  it('reports a refusal with file and reason, and writes nothing', () => {
    const bad = { path: 'kustomization.yaml', text: 'images:\n  - name: ghcr.io/example/hello\n    newTag: ${TAG}\n' };
    const plan = planBump({
      environment: 'dev',
      app: '',
      files: [bad],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: newest }],
    });
    expect(plan.updates).toEqual([]);
    expect(plan.refused).toHaveLength(1);
    expect(plan.body).toContain('> [!WARNING]');
    expect(plan.body).toContain('`kustomization.yaml:3`');
  });

  it('writes the good entries of a file beside a bad one and says in the body which entry was left and why', () => {
    const values = {
      path: 'values.yaml',
      text: `image:\n  repository: ghcr.io/example/hello\n  tag: 1.0.0\nworker:\n  image:\n    repository: ghcr.io/example/hello\n    tag: 1.0.0\n    digest: ${digestA}\n`,
    };
    const plan = planBump({
      environment: 'dev',
      app: '',
      files: [values],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: newest }],
    });
    expect(plan.updates).toEqual([{ path: 'values.yaml', content: values.text.replace('tag: 1.0.0', 'tag: 1.1.0') }]);
    expect(plan.refused).toEqual([
      {
        path: 'values.yaml',
        line: 7,
        left: true,
        reason:
          'worker.image pins a digest but the event carries none; send the digest with the event (or remove the pin)',
      },
    ]);
    expect(plan.body).toContain(
      '> Some entries could not be updated safely and were left as they were; the rest of their files was updated:\n> - `values.yaml:7`: left as it was (the rest of the file was updated): worker\\.image pins a digest',
    );
  });

  it('passes the editor settings of the configuration to the editor: Flux policies and dotted Helm keys', () => {
    const marked = {
      path: 'deploy.yaml',
      text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: docker.io/example/hello:1.0.0 # {"$imagepolicy": "flux-system:hello"}\n',
    };
    const dotted = { path: 'values.yaml', text: 'image.name: ghcr.io/example/hello\nimage.tag: 1.0.0\n' };
    const plan = planBump({
      environment: 'dev',
      app: '',
      files: [marked, dotted],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: newest }],
      editing: editSettingsFrom([
        { name: 'ghcr.io/example/hello', fluxPolicies: ['flux-system:hello'], helmDottedKeys: true },
      ]),
    });
    expect(plan.refused).toEqual([]);
    expect(plan.updates).toEqual([
      {
        path: 'deploy.yaml',
        content: marked.text.replace('docker.io/example/hello:1.0.0', 'ghcr.io/example/hello:1.1.0'),
      },
      { path: 'values.yaml', content: dotted.text.replace('1.0.0', '1.1.0') },
    ]);
  });

  it('with addImages adds an images: entry to an overlay that renders the image through its base, and only then', () => {
    const overlay = { path: 'apps/hello/overlays/dev/kustomization.yaml', text: 'resources:\n- ../../base\n' };
    const rendered = [
      { path: 'apps/hello/base/kustomization.yaml', text: 'resources:\n- deployment.yaml\n' },
      {
        path: 'apps/hello/base/deployment.yaml',
        text: 'apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: ghcr.io/example/hello:1.0.0\n',
      },
    ];
    const input = {
      environment: 'dev',
      app: 'hello',
      files: [overlay],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.1.0' }, policy: newest }],
    };
    expect(planBump(input).updates).toEqual([]);
    const plan = planBump({ ...input, addImages: { rendered } });
    expect(plan.refused).toEqual([]);
    expect(plan.updates).toEqual([
      { path: overlay.path, content: `${overlay.text}images:\n- name: ghcr.io/example/hello\n  newTag: 1.1.0\n` },
    ]);
    expect(plan.changes.map((change) => `${change.field}:${change.line}`)).toEqual([
      'images[0].name:4',
      'images[0].newTag:5',
    ]);
    // The next bump finds the entry and edits it.
    const next = planBump({
      ...input,
      files: [{ path: overlay.path, text: plan.updates[0]?.content ?? '' }],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.2.0' }, policy: newest }],
      addImages: { rendered },
    });
    expect(next.updates[0]?.content).toBe(`${overlay.text}images:\n- name: ghcr.io/example/hello\n  newTag: 1.2.0\n`);
    // An image the overlay does not render gets no entry.
    const other = planBump({
      ...input,
      images: [{ image: { repository: 'ghcr.io/example/world', tag: '1.1.0' }, policy: newest }],
      addImages: { rendered },
    });
    expect(other.updates).toEqual([]);
  });

  it('re-pins a digest when the same tag was pushed again', () => {
    const pinned = {
      path: 'kustomization.yaml',
      text: `images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n    digest: ${digestA}\n`,
    };
    const plan = planBump({
      environment: 'dev',
      app: '',
      files: [pinned],
      images: [{ image: { repository: 'ghcr.io/example/hello', tag: '1.0.0', digest: digestB }, policy: newest }],
    });
    expect(plan.updates[0]?.content).toBe(pinned.text.replace(digestA, digestB));
  });

  it('titles a single image by its short name', () => {
    expect(
      renderBumpTitle({
        kind: 'bump',
        environment: 'dev',
        app: 'api',
        images: [{ repository: 'ghcr.io/x/hello', tag: '1' }],
      }),
    ).toBe('Bump hello to 1 in dev (api)');
  });
});

describe('planPromotion', () => {
  const dev = {
    path: 'apps/hello/overlays/dev/kustomization.yaml',
    text: `images:\n  - name: ghcr.io/example/hello\n    newTag: 1.2.0\n    digest: ${digestB}\nreplicas:\n  - name: hello\n    count: 1\n`,
  };
  const staging = {
    path: 'apps/hello/overlays/staging/kustomization.yaml',
    text: `images:\n  - name: ghcr.io/example/hello\n    newTag: 1.1.0\n    digest: ${digestA}\nreplicas:\n  - name: hello\n    count: 3\n`,
  };

  it('copies tag and digest together, and nothing else', () => {
    const plan = planPromotion({
      source: 'dev',
      target: 'staging',
      app: 'hello',
      apps: [{ app: 'hello', sourceFiles: [dev], targetFiles: [staging] }],
    });
    expect(plan.updates).toEqual([
      { path: staging.path, content: staging.text.replace('1.1.0', '1.2.0').replace(digestA, digestB) },
    ]);
    expect(plan.title).toBe('Promote hello 1.2.0 to staging');
    expect(plan.branch).toBe('escalator/promote/staging/hello');
    expect(plan.rows).toEqual([
      { app: 'hello', image: 'ghcr.io/example/hello', from: '1.1.0', to: '1.2.0', digest: digestB },
    ]);
  });

  it('reads and promotes an image every render renames to a mirror as the mirror', () => {
    const files = (env: string, tag: string) => [
      {
        path: `apps/a/overlays/${env}/kustomization.yaml`,
        text: 'resources:\n- deploy.yaml\nimages:\n- name: alpine\n  newName: my.mirror/alpine\n',
      },
      {
        path: `apps/a/overlays/${env}/deploy.yaml`,
        text: `apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: alpine:${tag}\n`,
      },
    ];
    expect([...readVersions(files('dev', '1.9.0')).values()]).toEqual([
      { name: 'my.mirror/alpine', repository: 'my.mirror/alpine', tag: '1.9.0' },
    ]);
    const plan = planPromotion({
      source: 'dev',
      target: 'staging',
      app: 'a',
      apps: [{ app: 'a', sourceFiles: files('dev', '1.9.0'), targetFiles: files('staging', '1.8.0') }],
    });
    expect(plan.refused).toEqual([]);
    expect(plan.rows).toEqual([{ app: 'a', image: 'my.mirror/alpine', from: '1.8.0', to: '1.9.0' }]);
    // What renders as the mirror is set where kustomize takes the mirror's version from: the renaming entry.
    expect(plan.updates).toEqual([
      {
        path: 'apps/a/overlays/staging/kustomization.yaml',
        content: 'resources:\n- deploy.yaml\nimages:\n- name: alpine\n  newName: my.mirror/alpine\n  newTag: 1.9.0\n',
      },
    ]);
  });

  it('has nothing to do when the target already runs the version', () => {
    const plan = planPromotion({
      source: 'dev',
      target: 'staging',
      app: 'hello',
      apps: [{ app: 'hello', sourceFiles: [dev], targetFiles: [dev] }],
    });
    expect(plan.updates).toEqual([]);
    expect(plan.rows).toEqual([]);
  });

  it('reports apps missing in the target instead of creating them', () => {
    const plan = planPromotion({
      source: 'dev',
      target: 'staging',
      app: '',
      apps: [{ app: 'world', sourceFiles: [dev], targetFiles: [] }],
    });
    expect(plan.missing).toEqual(['world']);
    expect(plan.body).toContain('have no files in staging: `world`');
  });

  it('reads the versions an environment runs', () => {
    expect([...readVersions([dev]).values()]).toEqual([
      { name: 'ghcr.io/example/hello', repository: 'ghcr.io/example/hello', tag: '1.2.0', digest: digestB },
    ]);
  });
});

describe('markdown from repository text', () => {
  it.each([
    ['plain', '`plain`'],
    ['a`b', '``a`b``'],
    ['`x`', '`` `x` ``'],
  ])('code(%j) = %j', (input, output) => {
    expect(code(input)).toBe(output);
  });
  it('escapes HTML, mentions and links in text', () => {
    expect(escapeText('<img src=x> @team [a](b)')).toBe('&lt;img src=x&gt; \\@team \\[a\\]\\(b\\)');
  });
  it('escapes pipes in table cells', () => {
    expect(cell('`a|b`')).toBe('`a\\|b`');
  });
});
