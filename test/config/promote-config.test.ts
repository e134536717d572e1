import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';

const lines = (...rows: string[]) => `${rows.join('\n')}\n`;
const dev = ['environments:', '  - name: dev', '    paths: ["apps/*/overlays/dev"]', '    from: registry'];

function problems(text: string) {
  const result = parseRepoConfig(text);
  return result.ok ? [] : result.problems.map(({ line, path, message, hint }) => ({ line, path, message, hint }));
}

describe('environments[].promote', () => {
  it('accepts config with include and exclude in the path dialect, with defaults', () => {
    const result = parseRepoConfig(
      lines(
        ...dev,
        '  - name: staging',
        '    paths: ["apps/*/overlays/staging"]',
        '    from: dev',
        '    promote: { config: true, include: ["patches/**", "kustomization.yaml"], exclude: ["secrets"] }',
        '  - name: prod',
        '    paths: ["apps/*/overlays/prod"]',
        '    from: staging',
        '    promote: {}',
      ),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.environments[1]?.promote).toEqual({
      config: true,
      include: ['patches/**', 'kustomization.yaml'],
      exclude: ['secrets'],
    });
    expect(result.config.environments[2]?.promote).toEqual({ config: false, include: [], exclude: [] });
    expect(result.config.environments[0]?.promote).toBeUndefined();
  });

  it('refuses it on an environment that takes from the registry, with the fix', () => {
    expect(problems(lines(...dev, '    promote: { config: true }'))).toEqual([
      {
        line: 5,
        path: 'environments[0].promote',
        message: 'promote applies to environments that take from another environment, not from "registry"',
        hint: 'remove it here: what lands here comes from image pushes; set promote: { config: true } on the environment whose from: is "dev"',
      },
    ]);
  });

  it('refuses an include pattern outside the dialect, with its line', () => {
    const found = problems(
      lines(
        ...dev,
        '  - name: staging',
        '    paths: ["apps/*/overlays/staging"]',
        '    from: dev',
        '    promote:',
        '      config: true',
        '      include: ["../secrets"]',
      ),
    );
    expect(found).toHaveLength(1);
    expect(found[0]?.line).toBe(10);
    expect(found[0]?.path).toBe('environments[1].promote.include[0]');
  });

  it('needs folders per app on both sides, paired by position', () => {
    expect(
      problems(
        lines(
          'environments:',
          '  - name: dev',
          '    paths: ["apps/**/dev", "more/*/dev"]',
          '    from: registry',
          '  - name: staging',
          '    paths: ["apps/*/values-staging.yaml"]',
          '    from: dev',
          '    promote: { config: true }',
        ),
      ).map((p) => [p.line, p.path, p.message]),
    ).toEqual([
      [
        6,
        'environments[1].paths[0]',
        'path "apps/*/values-staging.yaml" names a file: configuration is promoted between folders (apps/*/overlays/dev), where each file has a counterpart',
      ],
      [
        8,
        'environments[1].promote.config',
        '"dev" path "apps/**/dev" has "**": configuration promotion needs one folder per app, like apps/*/overlays/dev',
      ],
      [
        8,
        'environments[1].promote.config',
        'configuration promotion pairs paths by position, but "dev" has 2 and this environment has 1',
      ],
    ]);
  });

  it('says nothing of the paths while config is off', () => {
    expect(
      problems(
        lines(
          ...dev,
          '  - name: staging',
          '    paths: ["apps/**/staging"]',
          '    from: dev',
          '    promote: { config: false }',
        ),
      ),
    ).toEqual([]);
  });
});
