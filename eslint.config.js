// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The dependency rule of docs/architecture.md: planners and event normalizers are pure.
 * They take text and data and return text and plans; every kind of I/O lives in adapters.
 */
const ioModules = [
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'child_process',
  'node:child_process',
  'http',
  'node:http',
  'https',
  'node:https',
  'net',
  'node:net',
  'os',
  'node:os',
  'process',
  'node:process',
  'bullmq',
  'ioredis',
  'probot',
  'pino',
  'undici',
];
const ioPatterns = [
  '@octokit/*',
  '@escalator/github-sandbox',
  '@escalator/github-sandbox/*',
  '**/adapters/**',
  '**/jobs/**',
  '**/queue/**',
  '**/intake/**',
  '**/main/**',
  '**/observability/**',
];

export default tseslint.config(
  // Fixtures are data, kept as published; a registry folder's cases.ts (test/support/registry-fixtures.ts) is test code.
  {
    ignores: [
      '.dependency-cruiser.cjs',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test/fixtures/**/*',
      '!test/fixtures/registry/',
      '!test/fixtures/registry/*/',
      '!test/fixtures/registry/*/cases.ts',
      // The corpora are data; the test files beside them are code.
      'test/golden/*/',
      'examples/**',
      'bin/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // The simulator is for tests, benches and `npm run sandbox` (src/main/sandbox.ts, left out of
    // the build): nothing that runs in production may import it, or it would have to ship.
    files: ['src/**/*.ts'],
    ignores: ['src/main/sandbox.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@escalator/github-sandbox', '@escalator/github-sandbox/*'],
              message:
                'The GitHub simulator stays out of the production image: only tests, benches and src/main/sandbox.ts import it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/planners/**/*.ts', 'src/events/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ioModules.map((name) => ({
            name,
            message:
              'planners/ and events/ are pure: move I/O to src/adapters and compose it in src/jobs (docs/architecture.md).',
          })),
          patterns: [
            {
              group: ioPatterns,
              message: 'planners/ and events/ are pure: they may not import I/O layers (docs/architecture.md).',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'planners/ and events/ are pure: pass configuration in as data.' },
        { name: 'fetch', message: 'planners/ and events/ are pure: fetch in an adapter.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'planners/ and events/ are pure: take the time as an argument.' },
        { object: 'Math', property: 'random', message: 'planners/ and events/ are pure and deterministic.' },
      ],
    },
  },
  // packages/github-sandbox is a product of its own (docs/architecture.md): the simulator runs on
  // Node's standard library alone and imports nothing of Escalator, so it can be started, tested
  // and published without the product. Its tests and testing/ may use libraries, not the product.
  // One exception: the simulated agents' seeding (src/agents/seed.ts) edits a YAML configuration
  // in place, with the `yaml` package the product edits YAML with (a dependency of the package).
  ...[
    ['packages/github-sandbox/src/*.ts', 1, '^(?!node:|\\.)', []],
    ['packages/github-sandbox/src/*/**/*.ts', 2, '^(?!node:|\\.)', ['packages/github-sandbox/src/agents/seed.ts']],
    ['packages/github-sandbox/src/agents/seed.ts', 2, '^(?!node:|\\.|yaml$)', []],
  ].map(([files, depth, libraries, ignores]) => ({
    files: [files],
    ignores,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: libraries,
              message:
                "The simulator (packages/github-sandbox/src) uses only Node's standard library (node:*) and its own files (and `yaml`, in src/agents/seed.ts only).",
            },
            {
              regex: `^(\\.\\./){${depth},}`,
              message:
                'The simulator (packages/github-sandbox/src) imports only its own files: Escalator depends on it, never the reverse.',
            },
          ],
        },
      ],
    },
  })),
  {
    files: ['packages/github-sandbox/test/**/*.ts', 'packages/github-sandbox/testing/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./){2,}',
              message: "The simulator's tests import the simulator and libraries, never Escalator.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
