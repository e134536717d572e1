import { describe, expect, it } from 'vitest';
import { matchEnvironmentPath } from '../../src/config/repo-config.js';
import { discoverTargets, type TreeView } from '../../src/planners/diff/index.js';
import { planEnvironmentFiles } from '../../src/planners/environment-files.js';
import {
  checkPathPattern,
  compilePathPattern,
  matchPathPattern,
  PATH_PATTERN,
} from '../../src/planners/path-pattern.js';
import { checkGlob, matchesPaths, selectRelayTargets } from '../../src/planners/relay.js';

/**
 * One dialect for every `paths` (issue 14 §3): environment paths, diff paths and relay targets
 * read a pattern the same way, and a pattern none of them could match is refused.
 */

const kustomization =
  'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml]\n';

/** A file under `dir` that each reader can see: a kustomization (a diff target) in its directory. */
function tree(dirs: readonly string[]): TreeView {
  const files = Object.fromEntries(
    dirs.flatMap((dir) => [
      [`${dir}/kustomization.yaml`, kustomization],
      [`${dir}/deployment.yaml`, 'kind: Deployment\n'],
    ]),
  );
  return { files: Object.keys(files).sort(), read: (path) => files[path] };
}

/** What each of the three readers makes of `pattern` over the directory `dir`. */
function readers(pattern: string, dir: string) {
  const file = `${dir}/kustomization.yaml`;
  return {
    environment: planEnvironmentFiles({ environments: [{ name: 'prod', paths: [pattern] }] }, [file]).length > 0,
    // The shallowest match is the target: the directory itself or one above it.
    diff: discoverTargets(tree([dir]), { paths: [pattern] }).some(
      (target) => dir === target.dir || dir.startsWith(`${target.dir}/`),
    ),
    relay:
      selectRelayTargets([{ name: 'agent', repos: ['*/*'], paths: [pattern], events: ['push'] }], {
        event: 'push',
        repository: 'example/gitops',
        changedPaths: [file],
      }).length > 0,
  };
}

describe('path patterns', () => {
  describe('one dialect for environment paths, diff paths and relay targets', () => {
    it.each([
      // The example: braces were literal text for environments and a glob for the relay.
      ['apps/{web,api}/overlays/prod', 'apps/web/overlays/prod', true],
      ['apps/{web,api}/overlays/prod', 'apps/api/overlays/prod', true],
      ['apps/{web,api}/overlays/prod', 'apps/worker/overlays/prod', false],
      ['apps/*/overlays/prod', 'apps/web/overlays/prod', true],
      ['apps/*/overlays/prod', 'apps/web/overlays/dev', false],
      ['apps/web-*/prod', 'apps/web-/prod', false],
      ['apps/web-*/prod', 'apps/web-api/prod', true],
      ['apps/v?/prod', 'apps/v1/prod', true],
      ['apps/v?/prod', 'apps/v10/prod', false],
      ['apps/env-[abc]/prod', 'apps/env-b/prod', true],
      ['apps/env-[!abc]/prod', 'apps/env-b/prod', false],
      ['apps/env-[0-9]/prod', 'apps/env-7/prod', true],
      ['clusters/**/prod', 'clusters/prod', true],
      ['clusters/**/prod', 'clusters/eu/west/prod', true],
      ['clusters/{eu,us}/**/prod', 'clusters/us/east/prod', true],
      ['apps', 'apps/web/overlays/prod', true],
      ['apps/web', 'apps/website/prod', false],
      ['a.b+c(d)', 'a.b+c(d)', true],
      ['a.b', 'axb', false],
    ])('%s over %s: %s for all three', (pattern, dir, expected) => {
      expect(checkPathPattern(pattern)).toBeUndefined();
      expect(readers(pattern, dir)).toEqual({ environment: expected, diff: expected, relay: expected });
    });

    it('names the app with the first *, across lists, classes and **', () => {
      expect(
        matchEnvironmentPath('apps/{web,api}-*/overlays/prod', 'apps/web-hello/overlays/prod/kustomization.yaml'),
      ).toEqual({ app: 'hello' });
      expect(matchEnvironmentPath('clusters/**/[a-z]*/prod', 'clusters/eu/west/hello/prod/values.yaml')).toEqual({
        app: 'ello',
      });
      expect(matchEnvironmentPath('apps/{web,api}/overlays/prod', 'apps/api/overlays/prod/kustomization.yaml')).toEqual(
        {},
      );
      expect(
        planEnvironmentFiles({ environments: [{ name: 'prod', paths: ['apps/{web,api}/*/prod'] }] }, [
          'apps/api/hello/prod/kustomization.yaml',
        ]),
      ).toEqual([{ environment: 'prod', app: 'hello', path: 'apps/api/hello/prod/kustomization.yaml' }]);
    });

    it('matches repository names without regard to case, paths with it', () => {
      expect(compilePathPattern('example/{GitOps,infra}', { ignoreCase: true }).test('Example/gitops')).toBe(true);
      expect(compilePathPattern('apps/{Web,api}').test('apps/web')).toBe(false);
      expect(matchesPaths(['apps/{Web,api}'], ['apps/web/kustomization.yaml'])).toBe(false);
    });

    it('test matches the whole path; match also what is below', () => {
      const pattern = compilePathPattern('apps/*/overlays/prod');
      expect(pattern.test('apps/web/overlays/prod')).toBe(true);
      expect(pattern.test('apps/web/overlays/prod/kustomization.yaml')).toBe(false);
      expect(pattern.match('apps/web/overlays/prod/kustomization.yaml')).toEqual({ app: 'web' });
      expect(compilePathPattern('apps/**').test('apps')).toBe(true);
    });
  });

  describe('a pattern that cannot be matched is refused', () => {
    it.each([
      ['apps/{web,api/overlays/prod', 'path "apps/{web,api/overlays/prod" opens a "{" that is never closed'],
      ['apps/web,api}/prod', 'path "apps/web,api}/prod" closes a "}" that was never opened'],
      ['apps/{web,}/prod', 'in path "apps/{web,}/prod", the list "{web,}" has an empty name'],
      ['apps/{web,*}/prod', 'in path "apps/{web,*}/prod", the list "{web,*}" holds "*"'],
      ['apps/{a,{b,c}}/prod', 'in path "apps/{a,{b,c}}/prod", the list "{a,{b,c}" holds "{"'],
      ['apps/{.,..}/prod', 'in path "apps/{.,..}/prod", the list "{.,..}" names "."'],
      ['apps/env-[abc/prod', 'path "apps/env-[abc/prod" opens a "[" that is never closed'],
      ['apps/env-[]/prod', 'in path "apps/env-[]/prod", "[]" is an empty class'],
      ['apps/env-abc]/prod', 'path "apps/env-abc]/prod" has a "]" outside a class'],
      ['apps/env-[*]/prod', 'in path "apps/env-[*]/prod", the class "[*]" holds "*"'],
      ['apps/env-[z-a]/prod', 'in path "apps/env-[z-a]/prod", the range "z-a" of "[z-a]" is backwards'],
      ['apps/**.yaml', '"**" in path "apps/**.yaml" must be a whole segment'],
      ['apps/*-*/prod', 'path segment "*-*" has more than one "*"'],
    ])('%s', (pattern, message) => {
      expect(checkPathPattern(pattern)?.message).toBe(message);
      expect(checkPathPattern(pattern)?.hint).toBeTruthy();
      // The relay refuses it at boot with the same words, and nothing matches it meanwhile.
      expect(checkGlob(pattern)).toContain(message);
      expect(matchPathPattern(pattern, 'apps/web/prod/x.yaml')).toBeNull();
      expect(compilePathPattern(pattern).test(pattern)).toBe(false);
    });

    it('a lone ! or ^ in a class is the character itself, as editors read it', () => {
      expect(compilePathPattern('a[!]').test('a!')).toBe(true);
      expect(compilePathPattern('a[^]').test('a^')).toBe(true);
      expect(compilePathPattern('a[!!]').test('a!')).toBe(false);
      expect(PATH_PATTERN.test('a[!]')).toBe(true);
    });
  });

  it('matches in time linear in pattern segments times path segments, whatever the pattern', () => {
    const pattern = `${'**/'.repeat(40)}*x`;
    const path = `${'a/'.repeat(400)}b`;
    const started = performance.now();
    expect(matchPathPattern(pattern, path)).toBeNull();
    expect(compilePathPattern(`${'**/'.repeat(40)}{a,b}`).test(path)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
