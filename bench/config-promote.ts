/**
 * `npm run bench:config-promote`: what the three-way configuration planner costs on a
 * repository-sized input, beside the image editor on a comparable one.
 *
 * 1. build 200 apps in memory, each with three files in X (before and after a change) and in Y:
 *    a kustomization (a resource added, an image tag set), a Deployment patch (replicas set — Y
 *    keeps its own for every third app —, an env var added, a memory limit added) and a ConfigMap
 *    (a value set, a key removed, a block scalar changed)
 * 2. check the plan once (every app edited, the kept replicas listed), then time
 *    `planConfigPromotion` over the 600 files
 * 3. time `editImages` over the same 200 apps' 600 Y files (the image bump of one tag: the same
 *    texts read, one scalar written per app) and print both and their ratio
 */
import { editImages } from '../src/planners/image-edit/index.js';
import { planConfigPromotion, type ConfigFileInput } from '../src/planners/config-promote/index.js';
import { loadavg } from './support/stats.js';

const APPS = 200;

function kustomization(app: number, after: boolean, staging: boolean): string {
  return [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    `namespace: app-${app}${staging ? '-staging' : ''}`,
    'resources:',
    '  - ../../base',
    ...(after ? ['  - hpa.yaml'] : []),
    '  - service.yaml',
    'patches:',
    '  - path: deployment-patch.yaml',
    'images:',
    `  - name: ghcr.io/example/app-${app} # the app`,
    `    newTag: ${after ? '1.4.0' : '1.3.0'}`,
    '',
  ].join('\n');
}

function patch(app: number, after: boolean, replicas: number): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: app-${app}`,
    'spec:',
    `  replicas: ${replicas} # scaled by hand`,
    '  template:',
    '    spec:',
    '      containers:',
    `        - name: app-${app}`,
    '          env:',
    '            - name: PORT',
    '              value: "8080"',
    ...(after ? ['            - name: LOG_LEVEL', '              value: debug'] : []),
    '          resources:',
    '            limits:',
    '              cpu: 500m',
    ...(after ? ['              memory: 512Mi'] : []),
    '',
  ].join('\n');
}

function configMap(app: number, after: boolean, staging: boolean): string {
  return [
    '# settings of the app',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: app-${app}-settings`,
    'data:',
    `  MODE: ${after ? 'fast' : 'safe'}`,
    ...(after ? [] : ['  LEGACY: "true"']),
    `  REGION: ${staging ? 'eu-west-1' : 'eu-west-1'}`,
    '  app.properties: |',
    '    threads=4',
    `    cache=${after ? 'on' : 'off'}`,
    '',
  ].join('\n');
}

function files(): ConfigFileInput[] {
  const result: ConfigFileInput[] = [];
  for (let app = 0; app < APPS; app += 1) {
    const own = app % 3 === 0;
    result.push(
      {
        path: `apps/app-${app}/kustomization.yaml`,
        sourceBefore: kustomization(app, false, false),
        sourceAfter: kustomization(app, true, false),
        target: kustomization(app, false, true),
      },
      {
        path: `apps/app-${app}/deployment-patch.yaml`,
        sourceBefore: patch(app, false, 2),
        sourceAfter: patch(app, true, 3),
        target: patch(app, false, own ? 5 : 2).replace(/^( {2}name: .*)$/m, '$1 # staging'),
      },
      {
        path: `apps/app-${app}/configmap.yaml`,
        sourceBefore: configMap(app, false, false),
        sourceAfter: configMap(app, true, false),
        target: configMap(app, false, true).replace('\n', '\r\n'),
      },
    );
  }
  return result;
}

function time(fn: () => void, repeat: number): number {
  const start = performance.now();
  for (let i = 0; i < repeat; i += 1) fn();
  return (performance.now() - start) / repeat;
}

function format(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
}

const input = files();
const bytes = input.reduce(
  (sum, file) => sum + (file.target?.length ?? 0) + (file.sourceBefore?.length ?? 0) + (file.sourceAfter?.length ?? 0),
  0,
);

// Correctness first: a bench of a planner that does nothing proves nothing.
const check = planConfigPromotion(input);
const outcomes = new Map<string, number>();
for (const file of check.files) outcomes.set(file.outcome, (outcomes.get(file.outcome) ?? 0) + 1);
const keptReplicas = check.files.reduce((sum, file) => sum + file.kept.length, 0);
if (outcomes.get('edited') !== input.length || keptReplicas !== Math.ceil(APPS / 3)) {
  throw new Error(
    `bench: expected every file edited and ${Math.ceil(APPS / 3)} kept replicas, got ${JSON.stringify([...outcomes])} and ${keptReplicas} kept; first refusal: ${JSON.stringify(check.files.find((file) => file.refusals.length > 0)?.refusals)}`,
  );
}
const edits = check.files.reduce((sum, file) => sum + file.edits.length, 0);

const imageEvent = (app: number) => ({ repository: `ghcr.io/example/app-${app}`, tag: '1.4.0' });
const imageInput = input.map((file, index) => ({
  text: file.target as string,
  path: file.path,
  app: Math.floor(index / 3),
}));
const imageCheck = imageInput.filter(
  ({ text, path, app }) => editImages(text, imageEvent(app), { path }).changed.length === 1,
).length;
if (imageCheck !== APPS) throw new Error(`bench: expected ${APPS} image edits, got ${imageCheck}`);

// Warm up the JIT on both.
planConfigPromotion(input);
for (const { text, path, app } of imageInput) editImages(text, imageEvent(app), { path });

const repeat = 5;
const load = loadavg();
const config = time(() => planConfigPromotion(input), repeat);
const image = time(() => {
  for (const { text, path, app } of imageInput) editImages(text, imageEvent(app), { path });
}, repeat);

console.log(
  `${APPS} apps, ${input.length} files (${(bytes / 1024).toFixed(0)} KB across X before, X after and Y), load ${load}`,
);
console.log(
  `    planConfigPromotion   ${format(config)} per promotion of all ${APPS} apps  (${format(config / APPS)} per app; ${edits} edits, ${keptReplicas} kept values)`,
);
console.log(
  `    editImages (Y files)  ${format(image)} per bump of all ${APPS} apps  (${format(image / APPS)} per app; ${APPS} edits)`,
);
console.log(
  `    ratio                 ${(config / image).toFixed(2)}× the image editor's time (three texts read per file instead of one)`,
);
