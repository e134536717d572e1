import { describe, expect, it } from 'vitest';
import { matchEnvironmentPath } from '../../src/config/repo-config.js';

describe('matchEnvironmentPath', () => {
  const cases: [pattern: string, file: string, expected: { app?: string } | null][] = [
    // `*` is one segment and names the app; a directory pattern owns everything below it.
    ['apps/*/overlays/dev', 'apps/hello/overlays/dev/kustomization.yaml', { app: 'hello' }],
    ['apps/*/overlays/dev', 'apps/hello/overlays/dev/patches/replicas.yaml', { app: 'hello' }],
    ['apps/*/overlays/dev', 'apps/hello/overlays/dev', { app: 'hello' }],
    ['apps/*/overlays/dev/', 'apps/hello/overlays/dev/kustomization.yaml', { app: 'hello' }],
    ['apps/*/overlays/dev', 'apps/hello/overlays/prod/kustomization.yaml', null],
    ['apps/*/overlays/dev', 'apps/hello/overlays/development/kustomization.yaml', null],
    ['apps/*/overlays/dev', 'apps/hello/overlays', null],
    ['apps/*/overlays/dev', 'apps/hello/base/deployment.yaml', null],
    ['apps/*/overlays/dev', 'other/hello/overlays/dev/kustomization.yaml', null],
    ['apps/*/overlays/dev', 'Apps/hello/overlays/dev/kustomization.yaml', null],
    // `*` inside a segment binds the part it matches, never an empty one.
    ['apps/app-*/dev', 'apps/app-hello/dev/kustomization.yaml', { app: 'hello' }],
    ['apps/app-*/dev', 'apps/app-/dev/kustomization.yaml', null],
    ['apps/app-*/dev', 'apps/hello/dev/kustomization.yaml', null],
    ['clusters/dev/*.yaml', 'clusters/dev/hello.yaml', { app: 'hello' }],
    ['clusters/dev/*.yaml', 'clusters/dev/hello.yml', null],
    ['clusters/dev/*-values.yaml', 'clusters/dev/hello-values.yaml', { app: 'hello' }],
    // A pattern without `*` binds no app.
    ['clusters/prod/values.yaml', 'clusters/prod/values.yaml', {}],
    ['clusters/prod/values.yaml', 'clusters/prod/values.yaml.bak', null],
    ['clusters/prod', 'clusters/prod/apps/hello.yaml', {}],
    // `**` matches any number of segments, none included.
    ['clusters/**/prod', 'clusters/eu/west/prod/values.yaml', {}],
    ['clusters/**/prod', 'clusters/prod/values.yaml', {}],
    ['clusters/**/prod', 'clusters/eu/staging/values.yaml', null],
    ['**/kustomization.yaml', 'kustomization.yaml', {}],
    ['**/kustomization.yaml', 'apps/hello/overlays/dev/kustomization.yaml', {}],
    ['apps/**', 'apps/hello/overlays/dev/kustomization.yaml', {}],
    ['clusters/**/app-*.yaml', 'clusters/eu/west/app-hello.yaml', { app: 'hello' }],
    ['clusters/**/apps/*/prod', 'clusters/eu/west/apps/hello/prod/kustomization.yaml', { app: 'hello' }],
    ['**/*/prod', 'a/b/prod/kustomization.yaml', { app: 'b' }],
    // With two `*`, the first names the app.
    ['clusters/*/apps/*/dev', 'clusters/eu/apps/hello/dev/kustomization.yaml', { app: 'eu' }],
  ];

  it.each(cases)('%s ~ %s → %j', (pattern, file, expected) => {
    expect(matchEnvironmentPath(pattern, file)).toEqual(expected);
  });
});
