import { describe, expect, it } from 'vitest';
import { editImages, kustomizeViews, listImages } from '../../../src/planners/image-edit/index.js';
import { planBump } from '../../../src/planners/bump-plan.js';
import { lines } from './helpers.js';

const deployment = lines(
  'apiVersion: apps/v1',
  'kind: Deployment',
  'spec:',
  '  template:',
  '    spec:',
  '      containers:',
  '        - image: alpine:1.8.0',
);
const rename = lines('resources:', '- ../../base', 'images:', '- name: alpine', '  newName: my.mirror/alpine');

describe('kustomizeViews', () => {
  it('gives each file one view per root kustomization, with the renames on the way', () => {
    const views = kustomizeViews([
      { path: 'base/deployment.yaml', text: deployment },
      { path: 'base/patch.yaml', text: deployment },
      {
        path: 'base/kustomization.yaml',
        text: lines('resources:', '- deployment.yaml', 'patches:', '- path: patch.yaml'),
      },
      { path: 'overlays/mirror/kustomization.yaml', text: rename },
      { path: 'overlays/upstream/Kustomization', text: lines('resources:', '- ../../base/') },
      { path: 'elsewhere/deployment.yaml', text: deployment },
    ]);
    const expected = [
      {
        root: 'overlays/mirror/kustomization.yaml',
        renames: [
          {
            kustomization: 'overlays/mirror/kustomization.yaml',
            entry: 'images[0]',
            name: 'alpine',
            newName: 'my.mirror/alpine',
            setsVersion: false,
          },
        ],
      },
      { root: 'overlays/upstream/Kustomization', renames: [] },
    ];
    expect(views.get('base/deployment.yaml')).toEqual(expected);
    expect(views.get('base/patch.yaml')).toEqual(expected);
    // Files no kustomization lists render as written; kustomizations themselves get no view.
    expect(views.has('elsewhere/deployment.yaml')).toBe(false);
    expect(views.has('base/kustomization.yaml')).toBe(false);
  });

  it('ignores remote resources, paths that leave the checkout and files it was not given', () => {
    const views = kustomizeViews([
      {
        path: 'k/kustomization.yaml',
        text: lines(
          'resources:',
          '- https://github.com/example/repo//base?ref=v1',
          '- github.com/example/repo/base',
          '- ../../outside',
          '- missing.yaml',
          'images:',
          '- name: alpine',
          '  newName: my.mirror/alpine',
          '  newTag: "1.0"',
        ),
      },
    ]);
    expect([...views.keys()]).toEqual([]);
  });

  it('survives kustomizations that list each other', () => {
    const views = kustomizeViews([
      { path: 'a/kustomization.yaml', text: lines('resources:', '- ../b', '- d.yaml') },
      { path: 'b/kustomization.yaml', text: lines('resources:', '- ../a') },
      { path: 'a/d.yaml', text: deployment },
    ]);
    // Each lists the other, so neither is a root: nothing renders d.yaml from a root.
    expect(views.get('a/d.yaml')).toBeUndefined();
  });
});

describe('editing with views', () => {
  it('an event for the upstream image leaves a manifest alone that renders only as the mirror', () => {
    const views = kustomizeViews([
      { path: 'base/deployment.yaml', text: deployment },
      { path: 'base/kustomization.yaml', text: lines('resources:', '- deployment.yaml') },
      { path: 'overlays/mirror/kustomization.yaml', text: rename },
    ]).get('base/deployment.yaml');
    expect(views).toHaveLength(1);
    const result = editImages(
      deployment,
      { repository: 'alpine', tag: '1.9.0' },
      { path: 'base/deployment.yaml', views },
    );
    expect(result).toMatchObject({ text: deployment, mentions: false, changed: [], refused: [] });
    // Without the kustomization it is the upstream image, and is edited.
    expect(editImages(deployment, { repository: 'alpine', tag: '1.9.0' }, { path: 'base/deployment.yaml' }).text).toBe(
      deployment.replace('alpine:1.8.0', 'alpine:1.9.0'),
    );
  });

  it('the bump planner decides per render across the target files', () => {
    const plan = planBump({
      environment: 'dev',
      app: 'alpine',
      files: [
        { path: 'base/deployment.yaml', text: deployment },
        { path: 'base/kustomization.yaml', text: lines('resources:', '- deployment.yaml') },
        { path: 'overlays/mirror/kustomization.yaml', text: rename },
        { path: 'overlays/upstream/kustomization.yaml', text: lines('resources:', '- ../../base') },
      ],
      images: [
        {
          image: { repository: 'docker.io/library/alpine', tag: '1.9.0' },
          policy: { policy: 'newest', pinDigest: false },
        },
      ],
    });
    expect(plan.updates).toEqual([]);
    expect(plan.refused).toEqual([
      {
        path: 'base/deployment.yaml',
        line: 7,
        reason:
          'spec.template.spec.containers[0].image renders as alpine in some renders but as my.mirror/alpine through overlays/mirror/kustomization.yaml (images[0] renames alpine and leaves the version to this file), so a new tag here would be asked from my.mirror/alpine, where it was not pushed; set newTag or digest in that entry, or give the renders separate files',
      },
    ]);
  });
});

describe('listImages with the render views (an image renamed to a mirror is read as the mirror)', () => {
  const base = { path: 'base/kustomization.yaml', text: lines('resources:', '- deployment.yaml') };
  const manifest = { path: 'base/deployment.yaml', text: deployment };
  const read = (overlays: Array<{ path: string; text: string }>) => {
    const views = kustomizeViews([base, manifest, ...overlays]).get(manifest.path) ?? [];
    return listImages(manifest.text, { path: manifest.path, views }).uses.map(
      (use) => `${use.name}:${use.tag ?? ''} (${use.written})`,
    );
  };

  it('reads the manifest image as the mirror, at its own tag, when every render renames it and leaves the version', () => {
    expect(read([{ path: 'overlays/mirror/kustomization.yaml', text: rename }])).toEqual([
      'my.mirror/alpine:1.8.0 (my.mirror/alpine)',
    ]);
  });

  it('leaves it out when the renaming entry sets the version (the entry is the use)', () => {
    expect(read([{ path: 'overlays/mirror/kustomization.yaml', text: `${rename}  newTag: 2.0.0\n` }])).toEqual([]);
  });

  it('reads it as written when only some renders rename it, or without views', () => {
    expect(
      read([
        { path: 'overlays/mirror/kustomization.yaml', text: rename },
        { path: 'overlays/upstream/kustomization.yaml', text: lines('resources:', '- ../../base') },
      ]),
    ).toEqual(['docker.io/library/alpine:1.8.0 (alpine)']);
    expect(listImages(manifest.text, { path: manifest.path }).uses.map((use) => use.name)).toEqual([
      'docker.io/library/alpine',
    ]);
  });
});
