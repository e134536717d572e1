import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { planConfigPromotion } from '../../../src/planners/config-promote/index.js';

/** What a Deployment patch says; each field is one kind of edit X can make. */
interface Settings {
  replicas: number;
  env: Array<[string, string]>;
  memory: string | undefined;
  ports: number[];
  labels: Array<[string, string]>;
  script: string[];
}

/** How a file is written: the same settings in two environments' styles. */
interface Style {
  indent: number;
  /** `true`: list dashes at the parent key's column (kustomize's style). */
  flush: boolean;
  quote: '"' | "'";
  eol: '\n' | '\r\n';
  comments: boolean;
}

function render(settings: Settings, style: Style): string {
  const pad = (level: number) => ' '.repeat(style.indent * level);
  const item = (level: number) => (style.flush ? pad(level - 1) : pad(level)); // dash column of a list under a key at level - 1
  const content = (level: number) => `${item(level)}  `;
  const q = (value: string) => `${style.quote}${value}${style.quote}`;
  const rows = [
    ...(style.comments ? ['# the app, as this environment runs it'] : []),
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `${pad(1)}name: app`,
    ...(settings.labels.length > 0
      ? [`${pad(1)}labels:`, ...settings.labels.map(([k, v]) => `${pad(2)}${k}: ${q(v)}`)]
      : []),
    'spec:',
    `${pad(1)}replicas: ${settings.replicas}${style.comments ? '  # scaled by hand' : ''}`,
    `${pad(1)}template:`,
    `${pad(2)}spec:`,
    `${pad(3)}containers:`,
    `${item(4)}- name: app`,
    `${content(4)}image: ghcr.io/example/app:1.0.0`,
    ...(settings.env.length > 0
      ? [
          `${content(4)}env:`,
          ...settings.env.flatMap(([k, v]) => [
            `${content(4)}${item(1)}- name: ${k}`,
            `${content(4)}${item(1)}  value: ${q(v)}`,
          ]),
        ]
      : []),
    ...(settings.ports.length > 0
      ? [`${content(4)}ports:`, ...settings.ports.map((port) => `${content(4)}${item(1)}- containerPort: ${port}`)]
      : []),
    `${content(4)}resources:`,
    `${content(4)}${pad(1)}limits:`,
    `${content(4)}${pad(2)}cpu: 500m`,
    ...(settings.memory ? [`${content(4)}${pad(2)}memory: ${settings.memory}`] : []),
    ...(settings.script.length > 0
      ? [
          `${content(4)}args:`,
          `${content(4)}${item(1)}- |`,
          ...settings.script.map((line) => `${content(4)}${item(1)}  ${pad(1)}${line}`),
        ]
      : []),
  ];
  return rows.join(style.eol) + style.eol;
}

const NAMES = ['A', 'B', 'C', 'LOG_LEVEL', 'MODE'];

const settings: fc.Arbitrary<Settings> = fc.record({
  replicas: fc.integer({ min: 1, max: 5 }),
  env: fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom('1', 'on', 'x y', '1.10')), {
    selector: ([k]) => k,
    maxLength: 4,
  }),
  memory: fc.option(fc.constantFrom('256Mi', '1Gi'), { nil: undefined }),
  ports: fc.uniqueArray(fc.constantFrom(80, 443, 8080), { maxLength: 3 }),
  labels: fc.uniqueArray(
    fc.tuple(fc.constantFrom('team', 'tier', 'app.kubernetes.io/part-of'), fc.constantFrom('a', 'b')),
    { selector: ([k]) => k, maxLength: 3 },
  ),
  script: fc.constant([]),
});

const style: fc.Arbitrary<Style> = fc.record({
  indent: fc.constantFrom(2, 4),
  flush: fc.boolean(),
  quote: fc.constantFrom('"' as const, "'" as const),
  eol: fc.constantFrom('\n' as const, '\r\n' as const),
  comments: fc.boolean(),
});

function data(text: string): unknown {
  return parseAllDocuments(text).map((doc) => doc.toJS() as unknown);
}

describe('configuration promotion: property', () => {
  it('carries any change to a Y that means what X meant before, however Y is written, and keeps every other byte of Y', () => {
    fc.assert(
      fc.property(settings, settings, style, style, (before, after, xStyle, yStyle) => {
        // The env and ports lists of Y hold X's items in X's order; new items follow their
        // predecessors in X, so the result must equal X's after in Y's style, byte for byte.
        fc.pre(
          sameOrder(
            before.env.map(([k]) => k),
            after.env.map(([k]) => k),
          ),
        );
        fc.pre(sameOrder(before.ports, after.ports));
        fc.pre(
          sameOrder(
            before.labels.map(([k]) => k),
            after.labels.map(([k]) => k),
          ),
        );
        const plan = planConfigPromotion([
          {
            path: 'patch.yaml',
            sourceBefore: render(before, xStyle),
            sourceAfter: render(after, xStyle),
            target: render(before, yStyle),
          },
        ]).files[0];
        const expected = render(after, yStyle);
        if (plan?.outcome === 'refused') {
          // Only emptied block collections are refused here: everything else maps.
          expect(plan.refusals.every((refusal) => /would leave .* empty/.test(refusal.reason))).toBe(true);
          return;
        }
        if (JSON.stringify(data(expected)) === JSON.stringify(data(render(before, yStyle)))) {
          expect(plan?.outcome).toBe('unchanged');
          return;
        }
        expect(plan?.outcome).toBe('edited');
        expect(data(plan?.text ?? '')).toEqual(data(expected));
        // New map items are X's own lines (X's quoting) moved to Y's indentation: byte for byte
        // when both quote alike and no list or map appears or disappears whole.
        if (
          xStyle.quote === yStyle.quote &&
          !xStyle.comments &&
          !yStyle.comments &&
          before.labels.length > 0 === after.labels.length > 0 &&
          before.env.length > 0 === after.env.length > 0 &&
          before.ports.length > 0 === after.ports.length > 0
        )
          expect(plan?.text).toBe(expected);
      }),
      { numRuns: 300, seed: 33 },
    );
  });
});

/** Whether the items both lists hold come in the same order in each. */
function sameOrder<T>(a: readonly T[], b: readonly T[]): boolean {
  const common = a.filter((item) => b.includes(item));
  const other = b.filter((item) => a.includes(item));
  return common.every((item, i) => item === other[i]);
}
