import { describe, expect, it } from 'vitest';
import {
  changedFolders,
  folderPatternProblem,
  planConfigRoutes,
  targetFolder,
  travels,
  type RoutedEnvironment,
} from '../../src/planners/config-routes.js';

const on = { config: true, include: [] as string[], exclude: [] as string[] };
const environments: RoutedEnvironment[] = [
  { name: 'dev', from: 'registry', paths: ['apps/*/overlays/dev'] },
  { name: 'staging', from: 'dev', paths: ['apps/*/overlays/staging'], promote: on },
  { name: 'qa', from: 'dev', paths: ['apps/*/overlays/qa'] },
  { name: 'prod', from: 'staging', paths: ['apps/*/overlays/prod'], promote: { ...on, exclude: ['secrets'] } },
];

describe('changedFolders', () => {
  it('maps changed paths below an environment folder to (environment, app), relative and sorted', () => {
    expect(
      changedFolders(environments, [
        'apps/hello/overlays/dev/patches/env.yaml',
        'apps/hello/overlays/dev/kustomization.yaml',
        'apps/world/overlays/staging/config.env',
        'apps/hello/base/deployment.yaml',
        'apps/hello/overlays/dev',
        'README.md',
      ]),
    ).toEqual([
      {
        environment: 'dev',
        app: 'hello',
        pathIndex: 0,
        folder: 'apps/hello/overlays/dev',
        files: ['kustomization.yaml', 'patches/env.yaml'],
      },
      {
        environment: 'staging',
        app: 'world',
        pathIndex: 0,
        folder: 'apps/world/overlays/staging',
        files: ['config.env'],
      },
    ]);
  });

  it('skips file patterns and "**" patterns, which have no folder per app', () => {
    expect(
      changedFolders(
        [{ name: 'a', from: 'registry', paths: ['apps/*/values-dev.yaml', 'charts/**/dev'] }],
        ['apps/hello/values-dev.yaml', 'charts/x/y/dev/values.yaml'],
      ),
    ).toEqual([]);
  });
});

describe('planConfigRoutes', () => {
  it('routes a folder to each environment that promotes configuration from it, narrowed by exclude', () => {
    const folders = changedFolders(environments, [
      'apps/hello/overlays/dev/env.yaml',
      'apps/hello/overlays/staging/secrets/db.yaml',
      'apps/hello/overlays/staging/env.yaml',
    ]);
    expect(planConfigRoutes(environments, folders).map((r) => [r.environment, r.target, r.app, r.files])).toEqual([
      ['dev', 'staging', 'hello', ['env.yaml']],
      ['staging', 'prod', 'hello', ['env.yaml']],
    ]);
  });

  it('has no route when every file is excluded', () => {
    const folders = changedFolders(environments, ['apps/hello/overlays/staging/secrets/db.yaml']);
    expect(planConfigRoutes(environments, folders)).toEqual([]);
  });
});

describe('travels', () => {
  it.each([
    [{ include: [], exclude: [] }, 'env.yaml', true],
    [{ include: ['patches'], exclude: [] }, 'patches/env.yaml', true],
    [{ include: ['patches'], exclude: [] }, 'kustomization.yaml', false],
    [{ include: ['**'], exclude: ['secrets/*.yaml'] }, 'secrets/db.yaml', false],
    [{ include: ['*.yaml'], exclude: [] }, 'kustomization.yaml', true],
  ])('%o, %s → %s', (promote, path, expected) => {
    expect(travels(promote, path)).toBe(expected);
  });
});

describe('targetFolder and folderPatternProblem', () => {
  it('builds the target folder from the app', () => {
    expect(targetFolder('apps/*/overlays/staging', 'hello')).toBe('apps/hello/overlays/staging');
    expect(targetFolder('envs/staging/app-*', 'hello')).toBe('envs/staging/app-hello');
    expect(targetFolder('envs/staging', '')).toBe('envs/staging');
    expect(targetFolder('apps/*/overlays/staging', '..')).toBeUndefined();
    expect(targetFolder('apps/{a,b}/*/staging', 'hello')).toBeUndefined();
  });

  it('says why a pattern cannot carry configuration', () => {
    expect(folderPatternProblem('apps/*/overlays/dev', true)).toBeUndefined();
    expect(folderPatternProblem('apps/?/*/dev', false)).toBeUndefined();
    expect(folderPatternProblem('apps/?/*/dev', true)).toContain('wildcards besides');
    expect(folderPatternProblem('apps/*/Kustomization', false)).toContain('names a file');
  });
});
