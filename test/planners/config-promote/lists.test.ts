import { describe, expect, it } from 'vitest';
import { expectEdited, expectRefused, lines, plan } from './helpers.js';

/** A Deployment whose only container has `body` under it (indented for the container's keys). */
function deployment(body: string[], indent = '          '): string {
  return lines(
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: app',
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: app',
    `${indent}image: ghcr.io/example/app:1.0.0`,
    ...body.map((line) => indent + line),
  );
}

describe('configuration promotion: lists', () => {
  describe('env vars, matched by name', () => {
    it("adds a new variable after the same preceding one, in Y's own list style", () => {
      const result = expectEdited(
        deployment(['env:', '  - name: A', '    value: "1"', '  - name: B', '    value: "2"']),
        deployment([
          'env:',
          '  - name: A',
          '    value: "1"',
          '  - name: LOG_LEVEL',
          '    value: debug',
          '  - name: B',
          '    value: "2"',
        ]),
        deployment(['env:', '- name: B  # staging first', '  value: "2"', '- name: A', '  value: "1"']),
        deployment([
          'env:',
          '- name: B  # staging first',
          '  value: "2"',
          '- name: A',
          '  value: "1"',
          '- name: LOG_LEVEL',
          '  value: debug',
        ]),
        'deployment.yaml',
      );
      expect(result.edits).toEqual([
        {
          path: 'spec.template.spec.containers[name=app].env[name=LOG_LEVEL]',
          kind: 'add',
          to: '{"name":"LOG_LEVEL","value":"debug"}',
          line: 16,
        },
      ]);
    });

    it("puts a variable X put first before Y's first, and consecutive new ones in X's order", () => {
      expectEdited(
        deployment(['env:', '  - name: A', '    value: "1"']),
        deployment([
          'env:',
          '  - name: Z',
          '    value: z',
          '  - name: A',
          '    value: "1"',
          '  - name: B',
          '    value: b',
          '  - name: C',
          '    value: c',
        ]),
        deployment(['env:', '  - name: A', '    value: "1"', '  - name: OWN', '    value: o']),
        deployment([
          'env:',
          '  - name: Z',
          '    value: z',
          '  - name: A',
          '    value: "1"',
          '  - name: B',
          '    value: b',
          '  - name: C',
          '    value: c',
          '  - name: OWN',
          '    value: o',
        ]),
        'deployment.yaml',
      );
    });

    it("changes a value where Y holds the old one and keeps Y's own", () => {
      const result = expectEdited(
        deployment(['env:', '  - name: A', '    value: "1"', '  - name: B', '    value: "2"']),
        deployment(['env:', '  - name: A', '    value: "10"', '  - name: B', '    value: "20"']),
        deployment(['env:', '  - name: B', '    value: "2"', '  - name: A', '    value: "own"']),
        deployment(['env:', '  - name: B', '    value: "20"', '  - name: A', '    value: "own"']),
        'deployment.yaml',
      );
      expect(result.kept).toEqual([
        {
          path: 'spec.template.spec.containers[name=app].env[name=A].value',
          target: '"own"',
          sourceBefore: '"1"',
          sourceAfter: '"10"',
          line: 15,
        },
      ]);
      expect(result.edits.map((edit) => [edit.path, edit.line])).toEqual([
        ['spec.template.spec.containers[name=app].env[name=B].value', 13],
      ]);
    });

    it('removes a variable where Y holds the old one', () => {
      expectEdited(
        deployment(['env:', '  - name: A', '    value: "1"', '  - name: B', '    value: "2"']),
        deployment(['env:', '  - name: B', '    value: "2"']),
        deployment(['env:', '  # first', '  - name: A', '    value: "1"', '  - name: B', '    value: "2"']),
        deployment(['env:', '  # first', '  - name: B', '    value: "2"']),
        'deployment.yaml',
      );
    });

    it('refuses two containers with the same name, with the line', () => {
      const twice = (tag: string) =>
        lines(
          'spec:',
          '  containers:',
          '    - name: app',
          `      image: a:${tag}`,
          '    - name: app',
          '      image: b:1',
        );
      expectRefused(
        twice('1'),
        twice('2'),
        twice('1'),
        [{ file: 'sourceAfter', line: 5, reason: /two items with name=app.*ambiguous/ }],
        'patch.yaml',
      );
    });
  });

  describe('ports, mounts and other merge keys', () => {
    it('matches container ports by containerPort and protocol, volume mounts by mountPath', () => {
      expectEdited(
        deployment([
          'ports:',
          '  - containerPort: 8080',
          '    name: http',
          'volumeMounts:',
          '  - name: data',
          '    mountPath: /a',
        ]),
        deployment([
          'ports:',
          '  - containerPort: 8080',
          '    name: web',
          '  - containerPort: 53',
          '    protocol: UDP',
          'volumeMounts:',
          '  - name: data',
          '    mountPath: /a',
          '  - name: data',
          '    mountPath: /b',
        ]),
        deployment([
          'ports:',
          '  - {containerPort: 8080, name: http}',
          'volumeMounts:',
          '  - name: data',
          '    mountPath: /a',
        ]),
        deployment([
          'ports:',
          '  - {containerPort: 8080, name: web}',
          '  - containerPort: 53',
          '    protocol: UDP',
          'volumeMounts:',
          '  - name: data',
          '    mountPath: /a',
          '  - name: data',
          '    mountPath: /b',
        ]),
        'deployment.yaml',
      );
    });

    it('refuses a changed list whose items have no identity (args), with the line', () => {
      expectRefused(
        deployment(['args: ["--port", "8080"]']),
        deployment(['args: ["--port", "9090"]']),
        deployment(['args: ["--port", "8080"]']),
        [
          {
            file: 'sourceAfter',
            line: 11,
            reason: /list spec.template.spec.containers\[name=app\].args changed, but its items have no identity/,
          },
        ],
        'deployment.yaml',
      );
    });

    it('sets a generator literal by the key it defines', () => {
      const kustomization = (literals: string[]) =>
        lines('configMapGenerator:', '  - name: app', '    literals:', ...literals.map((one) => `      - ${one}`));
      const result = expectEdited(
        kustomization(['LOG=info', 'MODE=a']),
        kustomization(['LOG=debug', 'MODE=a']),
        kustomization(['MODE=b', 'LOG=info']),
        kustomization(['MODE=b', 'LOG=debug']),
      );
      expect(result.edits[0]?.path).toBe('configMapGenerator[name=app].literals[LOG]');
    });
  });

  describe('kustomization resources and patches', () => {
    it('adds a resource after the same preceding one, at the end when Y lacks it, and removes by value', () => {
      expectEdited(
        lines('resources:', '  - ../../base', '  - service.yaml', '  - old.yaml'),
        lines('resources:', '  - ../../base', '  - hpa.yaml', '  - service.yaml', '  - pdb.yaml'),
        lines('resources:', '- ../../base', '- old.yaml', "- 'ingress.yaml'"),
        lines('resources:', '- ../../base', '- hpa.yaml', "- 'ingress.yaml'", '- pdb.yaml'),
      );
    });

    it('adds to and removes from a flow list, keeping its brackets', () => {
      expectEdited(
        lines('resources: [../../base, a.yaml]'),
        lines('resources: [../../base, b.yaml]'),
        lines('resources: [../../base, a.yaml, own.yaml]  # staging'),
        lines('resources: [../../base, b.yaml, own.yaml]  # staging'),
      );
    });

    it('matches patches by path, and by target when inline', () => {
      const before = lines(
        'patches:',
        '  - path: replicas.yaml',
        '  - target:',
        '      kind: Deployment',
        '      name: app',
        '    patch: |-',
        '      - op: replace',
        '        path: /spec/replicas',
        '        value: 2',
      );
      const after = lines(
        'patches:',
        '  - path: replicas.yaml',
        '  - path: resources.yaml',
        '  - target:',
        '      kind: Deployment',
        '      name: app',
        '    patch: |-',
        '      - op: replace',
        '        path: /spec/replicas',
        '        value: 3',
      );
      const target = lines(
        'patches:',
        '- target:',
        '    name: app',
        '    kind: Deployment',
        '  patch: |-',
        '    - op: replace',
        '      path: /spec/replicas',
        '      value: 2',
        '- path: replicas.yaml',
      );
      const result = expectEdited(
        before,
        after,
        target,
        lines(
          'patches:',
          '- target:',
          '    name: app',
          '    kind: Deployment',
          '  patch: |-',
          '    - op: replace',
          '      path: /spec/replicas',
          '      value: 3',
          '- path: replicas.yaml',
          '- path: resources.yaml',
        ),
      );
      expect(result.edits.map((edit) => edit.path)).toEqual([
        'patches[path=resources.yaml]',
        'patches[target={"kind":"Deployment","name":"app"}].patch',
      ]);
    });
  });

  describe('documents of a multi-document file', () => {
    const service = (port: string) => [
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: app',
      'spec:',
      `  port: ${port}`,
    ];
    const config = (level: string) => [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: app',
      'data:',
      `  LEVEL: ${level}`,
    ];

    it('matches documents by kind and name, whatever their order', () => {
      expectEdited(
        lines(...service('80'), '---', ...config('info')),
        lines(...service('80'), '---', ...config('debug')),
        lines('---', ...config('info'), '---', ...service('8080')),
        lines('---', ...config('debug'), '---', ...service('8080')),
        'all.yaml',
      );
    });

    it('adds a new document after the same preceding one, and removes one Y holds as X did', () => {
      const secret = ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: app'];
      expectEdited(
        lines(...service('80'), '---', ...config('info')),
        lines(...service('80'), '---', ...secret),
        lines(...config('info'), '---', ...service('8080')),
        lines('---', ...service('8080'), '---', ...secret),
        'all.yaml',
      );
    });
  });

  describe('documents that cannot be matched', () => {
    it('refuses a change to a document without kind and name in a multi-document file, with its line, and reads past it otherwise', () => {
      expectRefused(
        lines('kind: A', 'metadata:', '  name: a', '---', 'x: 1'),
        lines('kind: A', 'metadata:', '  name: a', '---', 'x: 2'),
        lines('kind: A', 'metadata:', '  name: a', '---', 'x: 1'),
        [
          {
            file: 'sourceAfter',
            line: 5,
            reason: /document 2 of a file with several documents changed, but it has no kind and metadata.name/,
          },
        ],
        'all.yaml',
      );
      expectEdited(
        lines('kind: A', 'metadata:', '  name: a', 'v: 1', '---', 'x: 1'),
        lines('kind: A', 'metadata:', '  name: a', 'v: 2', '---', 'x: 1'),
        lines('x: 5', '---', 'kind: A', 'metadata:', '  name: a', 'v: 1'),
        lines('x: 5', '---', 'kind: A', 'metadata:', '  name: a', 'v: 2'),
        'all.yaml',
      );
    });

    it('refuses two documents of Y with one identity, and keeps a document Y changed that X removed', () => {
      const doc = (value: string) => ['kind: A', 'metadata:', '  name: a', `value: ${value}`];
      const other = ['kind: B', 'metadata:', '  name: b'];
      expectRefused(
        lines(...doc('1'), '---', ...other),
        lines(...doc('2'), '---', ...other),
        lines(...doc('1'), '---', ...doc('1'), '---', ...other),
        [{ file: 'target', line: 1, reason: /two documents for A\/a/ }],
        'all.yaml',
      );
      const kept = plan(
        lines(...doc('1'), '---', ...other),
        lines(...other),
        lines(...doc('9'), '---', ...other),
        'all.yaml',
      );
      expect(kept.outcome).toBe('kept');
      expect(kept.kept).toEqual([
        {
          path: '[A/a]',
          target: '{"kind":"A","metadata":{"name":"a"},"value":9}',
          sourceBefore: '{"kind":"A","metadata":{"name":"a"},"value":1}',
          line: 1,
        },
      ]);
    });
  });

  describe('files', () => {
    it('creates a file X created, as X wrote it', () => {
      const text = '# new\r\nkey: "v"\r\n';
      expect(plan(undefined, text, undefined, 'patches/new.yaml')).toEqual({
        path: 'patches/new.yaml',
        outcome: 'created',
        text,
        edits: [],
        kept: [],
        refusals: [],
      });
    });

    it('is unchanged when Y already has an equal file, and refuses one with other values', () => {
      expect(plan(undefined, lines('a: 1'), lines('a: 1 # same'), 'x.yaml').outcome).toBe('unchanged');
      expectRefused(
        undefined,
        lines('a: 1'),
        lines('a: 2'),
        [{ file: 'target', line: 1, reason: /no common version/ }],
        'x.yaml',
      );
    });

    it('deletes a file X deleted where Y holds what X held, else refuses', () => {
      expect(plan(lines('a: 1'), undefined, lines('a:   1'), 'x.yaml').outcome).toBe('deleted');
      expectRefused(
        lines('a: 1'),
        undefined,
        lines('a: 2'),
        [{ file: 'target', line: 1, reason: /holds its own values/ }],
        'x.yaml',
      );
      expect(plan(lines('a: 1'), undefined, undefined, 'x.yaml').outcome).toBe('unchanged');
    });

    it('refuses a change to a file Y does not have', () => {
      expectRefused(
        lines('a: 1'),
        lines('a: 2'),
        undefined,
        [{ file: 'target', line: 1, reason: /does not have/ }],
        'x.yaml',
      );
    });

    it('plans each file on its own: a refusal in one leaves the others', () => {
      const result = plan(lines('a: 1'), lines('a: 2'), lines('a: 1', 'a: 1'));
      expect(result.outcome).toBe('refused');
    });
  });
});
