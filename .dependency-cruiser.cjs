// @ts-check
/**
 * The folder table of docs/architecture.md as rules, and no import cycles, over src/ and packages/
 * (the simulator). Run by `npm run lint` (so by `npm test`); test/architecture/dependency-rules.test.ts
 * plants a violation of each kind and checks that it fails. Type-only imports count too: a type names what a folder depends on.
 *
 * Each folder lists what it may import from src/ besides itself (a folder, or one file).
 */
const allowed = {
  main: ['.*'],
  config: ['planners'],
  // adapters/store: repository state in Redis, where a merged pull request's provenance is recorded as it arrives.
  intake: ['events', 'queue', 'web', 'planners', 'config', 'adapters/store', 'observability'],
  events: ['planners'],
  // jobs/*/job.ts: each kind's contract (schema, options, how it is enqueued), gathered by queue/enqueue.ts only.
  queue: ['events', 'planners', 'observability', 'jobs/*/job.ts'],
  jobs: ['adapters', 'planners', 'queue', 'config', 'events', 'observability'],
  planners: [],
  // config: the subscription store keeps each repository's parsed configuration.
  adapters: ['planners', 'config', 'observability'],
  web: ['queue', 'observability'],
  cli: ['adapters', 'planners', 'config', 'intake', 'observability'],
  observability: [],
};

/** @type {import('dependency-cruiser').IConfiguration['forbidden']} */
const folderRules = Object.entries(allowed)
  .filter(([, may]) => !may.includes('.*'))
  .map(([folder, may]) => ({
    name: `${folder}-imports`,
    comment: `src/${folder}/ may import only ${may.length > 0 ? may.map((name) => `src/${name}${name.endsWith('.ts') ? '' : '/'}`).join(', ') : 'itself'} from src/ (docs/architecture.md, "Folders")`,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: {
      path: '^src/',
      pathNot: [
        `^src/${folder}/`,
        ...may.map((name) =>
          name.endsWith('.ts') ? `^src/${name.replace(/\./g, '\\.').replace(/\*/g, '[^/]+')}$` : `^src/${name}/`,
        ),
      ],
    },
  }));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle ties modules so that neither can be understood, tested or loaded alone: break it by moving the shared piece down.',
      severity: 'error',
      from: { path: '^(src|packages)/' },
      to: { circular: true },
    },
    {
      name: 'product-imports-no-sandbox',
      comment:
        'The simulated GitHub and agents (packages/) stay out of dist/ and the production image: only tests, benches and src/main/sandbox.ts (left out of the build) import them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/main/sandbox\\.ts$' },
      to: { path: '^packages/' },
    },
    {
      name: 'sandbox-imports-no-product',
      comment:
        'packages/github-sandbox imports nothing of Escalator (src/): Escalator depends on it, never the reverse; what it needs of the product is passed in.',
      severity: 'error',
      from: { path: '^packages/github-sandbox/' },
      to: { path: '^src/' },
    },
    {
      name: 'sandbox-runs-on-node-alone',
      comment:
        "The simulator (packages/github-sandbox/src) uses Node's standard library (node:*) and its own files only, so it starts without the product's libraries.",
      severity: 'error',
      from: { path: '^packages/github-sandbox/src/', pathNot: '^packages/github-sandbox/src/agents/seed\\.ts$' },
      to: { dependencyTypesNot: ['core', 'local'] },
    },
    {
      name: 'sandbox-seed-uses-yaml-alone',
      comment:
        "The simulated agents' seeding edits a YAML configuration in place: besides node:* and its own files it may use `yaml`, nothing else.",
      severity: 'error',
      from: { path: '^packages/github-sandbox/src/agents/seed\\.ts$' },
      to: { dependencyTypesNot: ['core', 'local'], pathNot: '(^|/)node_modules/yaml/' },
    },
    {
      name: 'jobs-import-no-job',
      comment:
        'A job folder (src/jobs/<kind>/) imports no other job folder and not the table: what two jobs share goes to src/jobs/shared/, the pure core or an adapter; enqueueing goes through src/queue/enqueue.ts.',
      severity: 'error',
      from: { path: '^src/jobs/(?!shared/)([^/]+)/' },
      to: { path: '^src/jobs/', pathNot: '^src/jobs/($1|shared)/' },
    },
    {
      name: 'jobs-shared-imports-no-job',
      comment: 'src/jobs/shared/ holds what jobs share; it never imports a job folder or the table.',
      severity: 'error',
      from: { path: '^src/jobs/shared/' },
      to: { path: '^src/jobs/(?!shared/)' },
    },
    {
      name: 'job-contract-imports',
      comment:
        "A job's contract (src/jobs/<kind>/job.ts: schema, options, how it is enqueued) is what intake and the web role load through src/queue/enqueue.ts: it imports only the queue's primitives, events, planners and observability, never an adapter, a processor or configuration.",
      severity: 'error',
      from: { path: '^src/jobs/[^/]+/job\\.ts$' },
      to: {
        path: '^src/',
        pathNot: '^src/(queue/(kind|names|producer)\\.ts|events/|planners/|observability/)',
      },
    },
    {
      name: 'queue-imports-contracts-in-enqueue-only',
      comment: 'Only src/queue/enqueue.ts gathers the job contracts; the rest of src/queue/ knows no kind of job.',
      severity: 'error',
      from: { path: '^src/queue/', pathNot: '^src/queue/enqueue\\.ts$' },
      to: { path: '^src/jobs/' },
    },
    {
      name: 'editor-reaches-no-diff',
      comment:
        'The image editor (src/planners/image-edit/) never reaches the diff planner (src/planners/diff/), directly or through another module: what both need (the kustomization reader, text and path helpers) lives in src/planners/kustomize/ or a neutral module of src/planners/.',
      severity: 'error',
      from: { path: '^src/planners/image-edit/' },
      to: { path: '^src/planners/diff/', reachable: true },
    },
    {
      name: 'diff-reaches-no-editor',
      comment:
        'The diff planner (src/planners/diff/) never reaches the image editor (src/planners/image-edit/), directly or through another module: what both need lives in src/planners/kustomize/ or a neutral module of src/planners/.',
      severity: 'error',
      from: { path: '^src/planners/diff/' },
      to: { path: '^src/planners/image-edit/', reachable: true },
    },
    {
      name: 'planners-shared-reaches-no-feature',
      comment:
        'What the planner folders share (src/planners/kustomize/ and the neutral modules they import: text, repository paths, YAML limits and parsing, image references, path patterns, markdown) reaches no planner folder: an import there would run back up into a feature.',
      severity: 'error',
      from: {
        path: '^src/planners/(kustomize/|(text|repo-path|yaml-guard|yaml-parse|image-ref|path-pattern|markdown)\\.ts$)',
      },
      to: { path: '^src/planners/(?!kustomize/)[^/]+/', reachable: true },
    },
    ...folderRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^dist/' },
    // Resolve package `exports` (the simulator's `@escalator/github-sandbox/agents`) to files, so a
    // product module importing the simulator is seen as importing packages/.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
