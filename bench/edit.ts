/**
 * `npm run bench:edit`: how fast the image editor is, against a naive parse → edit → stringify
 * baseline run in the same process (which also loses comments and formatting).
 *
 * 1. build (a) one ~5 MB multi-document manifest with the image near the end and
 *    (b) 1,000 small kustomizations, all in memory
 * 2. time editImages on each, then the baseline on each
 * 3. print edits per second and the ratios; exit non-zero when (a) takes 1 s or more per edit
 */
import { parseAllDocuments, isMap, isSeq, isScalar, type Document } from 'yaml';
import { editImages } from '../src/planners/image-edit/index.js';

const EVENT = {
  repository: 'ghcr.io/example/hello',
  tag: '1.4.0',
  digest: 'sha256:4e48184fbb43421f69311a9cf8e55c4615a1fe2b38f90b3134cc196601f4f116',
};

function deployment(index: number, image: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-${index}
  labels:
    app.kubernetes.io/name: app-${index}
  annotations:
    example.com/owner: "team-${index % 17}" # who to page
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-${index}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-${index}
    spec:
      containers:
        - name: main
          image: ${image}
          args: ["--port", "8080", "--log-level", "info"]
          env:
            - name: APP_INDEX
              value: "${index}"
          ports:
            - containerPort: 8080
`;
}

function bigManifest(targetBytes: number): string {
  const docs: string[] = [];
  let size = 0;
  for (let i = 0; size < targetBytes; i += 1) {
    const doc = deployment(i, `ghcr.io/example/service-${i}:1.0.${i % 50}`);
    docs.push(doc);
    size += doc.length + 4;
  }
  // The image near the end: the third-last document.
  docs.splice(docs.length - 2, 0, deployment(999_999, 'ghcr.io/example/hello:1.2.3'));
  return docs.join('---\n');
}

function kustomization(index: number): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: app-${index}
resources:
  - ../../base
images:
  - name: ghcr.io/example/hello # the app
    newTag: 1.2.${index % 10}
  - name: docker.io/library/nginx
    newTag: "1.25"
`;
}

/** The baseline: parse everything, set the values, stringify everything. */
function naiveEdit(text: string): string {
  const docs = parseAllDocuments(text) as Document.Parsed[];
  for (const doc of docs) {
    const root = doc.contents;
    if (!isMap(root)) continue;
    const images = root.get('images', true);
    if (isSeq(images)) {
      for (const entry of images.items) {
        if (isMap(entry) && entry.get('name') === EVENT.repository) entry.set('newTag', EVENT.tag);
      }
    }
    const containers = doc.getIn(['spec', 'template', 'spec', 'containers'], true);
    if (isSeq(containers)) {
      for (const container of containers.items) {
        const image = isMap(container) ? container.get('image', true) : undefined;
        if (isScalar(image) && typeof image.value === 'string' && image.value.startsWith(`${EVENT.repository}:`)) {
          image.value = `${EVENT.repository}:${EVENT.tag}`;
        }
      }
    }
  }
  return docs.map((doc) => doc.toString()).join('');
}

function time(fn: () => void, repeat: number): number {
  const start = performance.now();
  for (let i = 0; i < repeat; i += 1) fn();
  return (performance.now() - start) / repeat;
}

function format(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
}

const big = bigManifest(5 * 1024 * 1024);
const smalls = Array.from({ length: 1000 }, (_, i) => kustomization(i));

// Correctness first: a benchmark of an editor that does nothing proves nothing.
const check = editImages(big, EVENT, { path: 'apps/all.yaml' });
if (check.changed.length !== 1 || check.refused.length > 0) {
  throw new Error(
    `bench (a) expected one change, got ${JSON.stringify({ changed: check.changed, refused: check.refused })}`,
  );
}
const checkSmall = editImages(smalls[3] ?? '', EVENT, { path: 'overlays/dev/kustomization.yaml' });
if (checkSmall.changed.length !== 1) throw new Error('bench (b) expected one change per kustomization');

// Warm up the JIT on both paths.
editImages(big, EVENT, { path: 'apps/all.yaml' });
for (const text of smalls.slice(0, 50)) {
  editImages(text, EVENT, { path: 'kustomization.yaml' });
  naiveEdit(text);
}

const bigEdit = time(() => editImages(big, EVENT, { path: 'apps/all.yaml' }), 5);
const bigNaive = time(() => naiveEdit(big), 1);
const smallEdit = time(() => {
  for (const text of smalls) editImages(text, EVENT, { path: 'overlays/dev/kustomization.yaml' });
}, 3);
const smallNaive = time(() => {
  for (const text of smalls) naiveEdit(text);
}, 3);

console.log(
  `(a) one ${(big.length / 1024 / 1024).toFixed(1)} MB manifest (${big.split('\n---\n').length} documents), image near the end`,
);
console.log(`    editImages            ${format(bigEdit)} per edit  (${(1000 / bigEdit).toFixed(1)} edits/s)`);
console.log(`    parse → stringify     ${format(bigNaive)} per edit  (${(1000 / bigNaive).toFixed(2)} edits/s)`);
console.log(`    ratio                 ${(bigNaive / bigEdit).toFixed(1)}× faster than the baseline`);
console.log('(b) 1,000 small kustomizations');
console.log(
  `    editImages            ${format(smallEdit)} total  (${(1000 / (smallEdit / 1000)).toFixed(0)} edits/s)`,
);
console.log(
  `    parse → stringify     ${format(smallNaive)} total  (${(1000 / (smallNaive / 1000)).toFixed(0)} edits/s)`,
);
console.log(`    ratio                 ${(smallNaive / smallEdit).toFixed(2)}× the baseline's speed`);
if (bigEdit >= 1000) {
  console.error(`target missed: (a) took ${format(bigEdit)} per edit (target: under 1 s)`);
  process.exitCode = 1;
}
