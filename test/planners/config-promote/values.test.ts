import { describe, expect, it } from 'vitest';
import { expectEdited, expectRefused, lines, plan } from './helpers.js';

const deployment = (replicas: string, extra = '') =>
  lines(
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: app',
    'spec:',
    `  replicas: ${replicas}`,
    `  revisionHistoryLimit: 3${extra}`,
  );

describe('configuration promotion: values', () => {
  describe('when X sets a value', () => {
    it('sets it in Y where Y holds what X held before, keeping the comment, spacing and key order', () => {
      const result = expectEdited(
        deployment('2'),
        deployment('3'),
        lines(
          '# staging',
          'apiVersion: apps/v1',
          'kind: Deployment',
          'metadata:',
          '  name: app',
          'spec:',
          '  revisionHistoryLimit: 3',
          '  replicas:   2   # scaled by hand',
          '',
        ),
        lines(
          '# staging',
          'apiVersion: apps/v1',
          'kind: Deployment',
          'metadata:',
          '  name: app',
          'spec:',
          '  revisionHistoryLimit: 3',
          '  replicas:   3   # scaled by hand',
          '',
        ),
      );
      expect(result.edits).toEqual([{ path: 'spec.replicas', kind: 'set', from: '2', to: '3', line: 8 }]);
      expect(result.kept).toEqual([]);
    });

    it("keeps Y's own value and lists it (staging keeps replicas: 5 when dev goes 2 → 3)", () => {
      const result = plan(deployment('2'), deployment('3'), deployment('5'));
      expect(result.outcome).toBe('kept');
      expect(result.text).toBeUndefined();
      expect(result.edits).toEqual([]);
      expect(result.kept).toEqual([
        { path: 'spec.replicas', target: '5', sourceBefore: '2', sourceAfter: '3', line: 6 },
      ]);
    });

    it('compares by meaning, not bytes: "2" quoted is not 2, 2 written 0x2 is', () => {
      expect(plan(deployment('2'), deployment('3'), deployment('"2"')).outcome).toBe('kept');
      expectEdited(deployment('2'), deployment('3'), deployment('0x2'), deployment('3'));
    });

    it('is unchanged where Y already holds the new value', () => {
      const result = plan(deployment('2'), deployment('3'), deployment('3'));
      expect(result).toMatchObject({ outcome: 'unchanged', edits: [], kept: [], refusals: [] });
    });

    it("keeps Y's quoting style, and quotes a value that would not read back as a string", () => {
      expectEdited(
        lines('data:', '  VERSION: "1.9"', "  MODE: 'a'", '  LEVEL: info'),
        lines('data:', '  VERSION: "1.10"', '  MODE: b', '  LEVEL: "on"'),
        lines('data:', '  VERSION: "1.9"', "  MODE: 'a'", '  LEVEL: info'),
        lines('data:', '  VERSION: "1.10"', "  MODE: 'b'", '  LEVEL: "on"'),
        'configmap.yaml',
      );
    });

    it('sets an empty value (key:) with one space before the value', () => {
      expectEdited(
        lines('a:', 'b: 1'),
        lines('a: x', 'b: 1'),
        lines('a:  # empty', 'b: 1'),
        lines('a:  x # empty', 'b: 1'),
        'values.yaml',
      );
    });

    it('sets a block scalar as a whole, in Y indentation, keeping its header comment and what follows', () => {
      const result = expectEdited(
        lines('data:', '  app.properties: |', '    a=1', '    b=2', '  other: x'),
        lines('data:', '  app.properties: |', '    a=1', '    b=3', '  other: x'),
        lines(
          'data:',
          '    app.properties: |  # read at start',
          '        a=1',
          '        b=2',
          '',
          '    other: x  # own comment',
        ),
        lines(
          'data:',
          '    app.properties: |  # read at start',
          '        a=1',
          '        b=3',
          '',
          '    other: x  # own comment',
        ),
        'configmap.yaml',
      );
      expect(result.edits).toEqual([
        { path: 'data["app.properties"]', kind: 'set', from: '"a=1\\nb=2\\n"', to: '"a=1\\nb=3\\n"', line: 2 },
      ]);
    });

    it('turns a one-line value into a block scalar copied from X', () => {
      expectEdited(
        lines('data:', '  script: echo hi', '  other: x'),
        lines('data:', '  script: |-', '    echo hi', '    echo there', '  other: x'),
        lines('data:', '  script: echo hi', '  other: x'),
        lines('data:', '  script: |-', '    echo hi', '    echo there', '  other: x'),
        'configmap.yaml',
      );
    });
  });

  describe('when X gives an empty key a map', () => {
    it("writes X's lines under Y's key line, which keeps its comment", () => {
      const result = expectEdited(
        lines('metadata:', '  labels:', '  name: a'),
        lines('metadata:', '  labels:', '    team: a', '    tier: web', '  name: a'),
        lines('metadata:', '    labels:   # none yet', '    name: a'),
        lines('metadata:', '    labels:   # none yet', '      team: a', '      tier: web', '    name: a'),
        'patch.yaml',
      );
      expect(result.edits).toEqual([
        { path: 'metadata.labels', kind: 'set', from: '', to: '{"team":"a","tier":"web"}', line: 2 },
      ]);
    });
  });

  describe('when X adds a key', () => {
    it('adds it after the same preceding key, in Y indentation', () => {
      const result = expectEdited(
        lines('resources:', '  limits:', '    cpu: 500m', '  requests:', '    cpu: 100m'),
        lines('resources:', '  limits:', '    cpu: 500m', '    memory: 512Mi', '  requests:', '    cpu: 100m'),
        lines('resources:', '    limits:', '        cpu: 500m  # staging', '    requests:', '        cpu: 250m'),
        lines(
          'resources:',
          '    limits:',
          '        cpu: 500m  # staging',
          '        memory: 512Mi',
          '    requests:',
          '        cpu: 250m',
        ),
        'patch.yaml',
      );
      expect(result.edits).toEqual([{ path: 'resources.limits.memory', kind: 'add', to: '512Mi', line: 4 }]);
    });

    it('adds a nested map with its comments, moved to Y indentation', () => {
      expectEdited(
        lines('spec:', '  replicas: 2'),
        lines('spec:', '  replicas: 2', '  strategy:', '    # no surge', '    rollingUpdate:', '      maxSurge: 0'),
        lines('spec:', '    replicas: 4'),
        lines(
          'spec:',
          '    replicas: 4',
          '    strategy:',
          '      # no surge',
          '      rollingUpdate:',
          '        maxSurge: 0',
        ),
        'patch.yaml',
      );
    });

    it('adds at the end of the map when Y lacks the preceding key', () => {
      expectEdited(
        lines('a: 1', 'b: 2'),
        lines('a: 1', 'b: 2', 'c: 3'),
        lines('a: 1', 'z: 9'),
        lines('a: 1', 'z: 9', 'c: 3'),
        'values.yaml',
      );
    });

    it('is unchanged when Y has the key with the same value, kept when with another', () => {
      expect(plan(lines('a: 1'), lines('a: 1', 'c: 3'), lines('a: 1', 'c: 3')).outcome).toBe('unchanged');
      const kept = plan(lines('a: 1'), lines('a: 1', 'c: 3'), lines('a: 1', 'c: 4'));
      expect(kept.outcome).toBe('kept');
      expect(kept.kept).toEqual([{ path: 'c', target: '4', sourceAfter: '3', line: 2 }]);
    });

    it('keeps the absence where Y lacks the map X added into', () => {
      const result = plan(lines('spec:', '  a: 1'), lines('spec:', '  a: 1', '  b: 2'), lines('other: 1'));
      expect(result.outcome).toBe('kept');
      expect(result.kept).toEqual([{ path: 'spec.b', target: '', sourceAfter: '2', line: 1, absent: true }]);
    });
  });

  describe('when X removes a key', () => {
    it('removes its lines where Y holds the old value', () => {
      const result = expectEdited(
        lines('a: 1', 'b:', '  c: 2', 'd: 3'),
        lines('a: 1', 'd: 3'),
        lines('a: 1', '# about b', 'b:', '  c: 2   # note', '', 'd: 3'),
        lines('a: 1', '# about b', '', 'd: 3'),
        'values.yaml',
      );
      expect(result.edits).toEqual([{ path: 'b', kind: 'remove', from: '{"c":2}', line: 3 }]);
    });

    it("keeps Y's own value, and is unchanged where Y has no such key", () => {
      const kept = plan(lines('a: 1', 'b: 2'), lines('a: 1'), lines('a: 1', 'b: 7'));
      expect(kept.outcome).toBe('kept');
      expect(kept.kept).toEqual([{ path: 'b', target: '7', sourceBefore: '2', line: 2 }]);
      expect(plan(lines('a: 1', 'b: 2'), lines('a: 1'), lines('a: 1')).outcome).toBe('unchanged');
    });

    it('replaces every key of a map when X did (the new keys first, where X put them)', () => {
      expectEdited(
        lines('metadata:', '  labels:', '    a: "1"'),
        lines('metadata:', '  labels:', '    b: "2"'),
        lines('metadata:', '  labels:', '      a: "1"  # old', '  name: x'),
        lines('metadata:', '  labels:', '      b: "2"', '  name: x'),
        'patch.yaml',
      );
    });

    it('refuses to leave a block map empty (it would read as null)', () => {
      expectRefused(lines('a:', '  b: 1'), lines('a: {}'), lines('x: 0', 'a:', '  b: 1'), [
        { file: 'target', line: 3, reason: /would leave a empty/ },
      ]);
    });
  });

  describe('bytes Y owns', () => {
    it('keeps CRLF line ends and a BOM, and writes new lines with CRLF', () => {
      expectEdited(
        lines('data:', '  A: "1"'),
        lines('data:', '  A: "2"', '  B: x'),
        '\uFEFFdata:\r\n  A: "1"\r\n',
        '\uFEFFdata:\r\n  A: "2"\r\n  B: x\r\n',
        'configmap.yaml',
      );
    });

    it('keeps a missing final newline', () => {
      expectEdited(lines('a: 1'), lines('a: 1', 'b: 2'), 'a: 1', 'a: 1\nb: 2', 'values.yaml');
    });

    it('edits next to anchors and aliases it does not touch', () => {
      expectEdited(
        lines('common: &common', '  team: a', 'x:', '  labels: *common', '  replicas: 2'),
        lines('common: &common', '  team: a', 'x:', '  labels: *common', '  replicas: 3'),
        lines('common: &common  # shared', '  team: a', 'x:', '  labels: *common', '  replicas: 2'),
        lines('common: &common  # shared', '  team: a', 'x:', '  labels: *common', '  replicas: 3'),
        'values.yaml',
      );
    });
  });

  describe('refusals', () => {
    it('refuses an edit under an anchor that an alias repeats, with the line', () => {
      expectRefused(
        lines('base:', '  team: a', 'copy:', '  team: a'),
        lines('base:', '  team: b', 'copy:', '  team: a'),
        lines('base: &base', '  team: a', 'copy: *base'),
        [{ file: 'target', line: 1, reason: /anchor &base, which an alias repeats elsewhere/ }],
        'values.yaml',
      );
    });

    it('refuses an edit that goes through an alias in Y', () => {
      expectRefused(
        lines('a:', '  b: 1'),
        lines('a:', '  b: 2'),
        lines('x: &x', '  b: 1', 'a: *x'),
        [{ file: 'target', line: 3, reason: /alias \*x/ }],
        'values.yaml',
      );
    });

    it('refuses a new value that uses an alias', () => {
      expectRefused(
        lines('x: &x 1', 'a: 1'),
        lines('x: &x 1', 'a: 1', 'b: *x'),
        lines('x: 1', 'a: 1'),
        [{ line: 1, reason: /new value of b uses the alias \*x/ }],
        'values.yaml',
      );
    });

    it('refuses a key added into a flow map', () => {
      expectRefused(
        lines('labels:', '  a: "1"'),
        lines('labels:', '  a: "1"', '  b: "2"'),
        lines('name: x', 'labels: {a: "1"}'),
        [{ line: 2, reason: /flow map/ }],
      );
    });

    it('refuses a parse error and a duplicate key with their lines, and names the file', () => {
      expectRefused(lines('a: 1'), lines('a: 2'), lines('a: 1', 'b: [1, 2'), [
        { file: 'target', line: 3, reason: /not valid YAML/ },
      ]);
      expectRefused(lines('a: 1'), lines('a: 2'), lines('a: 1', 'b: 1', 'a: 1'), [
        { file: 'target', line: 3, reason: /duplicate key/ },
      ]);
      expectRefused(lines('a: 1', 'a: 1'), lines('a: 2'), lines('a: 1'), [
        { file: 'sourceBefore', line: 2, reason: /duplicate key/ },
      ]);
    });

    it('refuses a merge key hiding the edited key', () => {
      expectRefused(lines('a:', '  b: 1'), lines('a:', '  b: 2'), lines('base: &b', '  b: 1', 'a:', '  <<: *b'), [
        { line: 4, reason: /merges other keys in with <</ },
      ]);
    });
  });
});
