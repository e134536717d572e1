import { z } from 'zod';
import { parseRegistryMirrors } from './registry-mirrors.js';

/**
 * Environment variables, validated once at boot (src/config/env.ts).
 * Every field documents itself; docs/configuration.md is generated from these descriptions.
 */
export const EnvSchema = z.object({
  ESCALATOR_ROLE: z
    .enum(['all', 'web', 'worker'])
    .default('all')
    .describe(
      'Which half of the product this process runs: `web` (webhooks and registry intake), `worker` (BullMQ workers), or `all`. @default all',
    ),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('HTTP port of the web role. @default 3000'),
  HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Address the web role listens on; set `0.0.0.0` in a container. @default 127.0.0.1'),
  APP_ID: z.coerce.number().int().positive().describe('The GitHub App ID (App settings → General → App ID).'),
  PRIVATE_KEY: z
    .string()
    .refine(
      (key) => key.includes('PRIVATE KEY-----'),
      'is not a PEM private key (it should start with -----BEGIN RSA PRIVATE KEY-----)',
    )
    .describe('The App private key in PEM form. Alternatively `PRIVATE_KEY_PATH` names a file holding it.'),
  WEBHOOK_SECRET: z
    .string()
    .min(1)
    .describe('The webhook secret set in the App settings; every GitHub delivery is verified with it.'),
  GITHUB_API_URL: z
    .url()
    .default('https://api.github.com')
    .describe(
      'GitHub REST API base URL; for GitHub Enterprise Server `https://HOST/api/v3`. @default https://api.github.com',
    ),
  REDIS_URL: z
    .string()
    .regex(
      /^rediss?(\+sentinel|\+cluster)?:\/\//,
      'must be a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL',
    )
    .default('redis://127.0.0.1:6379')
    .describe(
      'Redis for the queues and state: `redis://[:password@]host:port[/db]`, `redis+sentinel://host:26379[,host…]/<master>`, or `redis+cluster://host:6379[,host…]` (`rediss…` for TLS). BullMQ needs `maxmemory-policy noeviction`. @default redis://127.0.0.1:6379',
    ),
  LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
    .default('info')
    .describe('Log verbosity. @default info'),
  ESCALATOR_REGISTRY_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters: it is the only thing that authenticates registry webhooks')
    .optional()
    .describe(
      "Legacy global token registries present (Authorization header, or path token for Docker Hub and Quay): its events may change every installation's repositories, so keep it for single-organisation setups only (a warning is logged at boot) and prefer ESCALATOR_INTAKE_TOKENS. Refused beside ESCALATOR_INTAKE_TOKENS.",
    ),
  ESCALATOR_CI_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters: it authenticates the CI API')
    .optional()
    .describe(
      "Legacy global bearer token for `POST /api/v1/images`: its events may change every installation's repositories (a warning is logged at boot). Prefer GitHub Actions OIDC (ESCALATOR_CI_OIDC_AUDIENCE) or ESCALATOR_INTAKE_TOKENS; refused beside ESCALATOR_INTAKE_TOKENS.",
    ),
  ESCALATOR_INTAKE_TOKENS: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Scoped intake tokens as JSON: `[{name, sha256, owners: ["acme"], images?: ["ghcr.io/acme/"], sources?: ["ci", "harbor"]}]`. Each token (kept as its SHA-256 only) may change only the repositories of its GitHub owners; `escalator token` makes an entry (see docs/registries.md). A route answers 404 while no token is accepted on it.',
    ),
  ESCALATOR_INTAKE_TOKENS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Path of a YAML or JSON file of scoped intake tokens (the same list); set at most one of ESCALATOR_INTAKE_TOKENS and this.',
    ),
  ESCALATOR_REGISTRY_AUTH_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Path of a Docker `config.json` (`{"auths": {"<host>": {"auth": "<base64 user:password>", "owners": ["<GitHub owner>"]}}}`, or `identitytoken`; what `docker login` writes, plus the GitHub owners each entry serves) with credentials to read images from registries: the digest, created time, platforms, size and source labels shown in pull requests, and the check that an announced tag resolves to the announced digest (an event the registry contradicts is refused). An installation reads only with the entries of its owner (`["*"]`: every installation, on purpose), else anonymously; an entry without `owners` stops the worker at start with the line to add. Unset: registries are read anonymously and events are not verified. See docs/registries.md.',
    ),
  ESCALATOR_REGISTRY_MIRRORS: z
    .string()
    .optional()
    .superRefine((text, context) => {
      const parsed = parseRegistryMirrors(text);
      if (!parsed.ok) for (const problem of parsed.problems) context.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      'Registry hosts read from another registry, as JSON (`{"ghcr.io": "http://127.0.0.1:5000"}`), as a containerd mirror is: the OCI Distribution paths stay and `ns=<host>` names the registry the image is from. When set, no other registry host is contacted (pull requests say so for its images). `npm run sandbox` sets it to its local registry, so nothing leaves the machine. Unset: every image is read from the host its name says.',
    ),
  ESCALATOR_SIGSTORE_TRUSTED_ROOTS: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory of Sigstore trusted roots (`<name>.json`, the `trusted_root.json` format of sigstore/protobuf-specs) that `environments[].verify.trustedRoot` names: keyless signatures and provenance are checked against them, offline (nothing is fetched from a transparency log or TUF). Unset: an environment whose policy names signers refuses every image, with this reason. See docs/security.md.',
    ),
  ESCALATOR_CI_OIDC_AUDIENCE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Enables GitHub Actions OIDC for `POST /api/v1/images`: the audience workflows request their id-token with (`core.getIDToken(audience)`). A workflow's events may change only the repositories of its `repository_owner`.",
    ),
  ESCALATOR_CI_OIDC_ISSUER: z
    .url()
    .default('https://token.actions.githubusercontent.com')
    .describe(
      'Issuer of GitHub Actions OIDC tokens; for GitHub Enterprise Server `https://HOST/_services/token`. @default https://token.actions.githubusercontent.com',
    ),
  ESCALATOR_CI_OIDC_JWKS_URL: z
    .string()
    .min(1)
    .default('https://token.actions.githubusercontent.com/.well-known/jwks')
    .describe(
      "Where GitHub Actions' token signing keys are read from (a URL, or a file path). @default https://token.actions.githubusercontent.com/.well-known/jwks",
    ),
  ESCALATOR_CI_OIDC_MAX_LIFETIME_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(21_600)
    .describe(
      'Longest lifetime (`exp - iat`) of a GitHub Actions OIDC token accepted; GitHub issues tokens of up to 6 hours. @default 21600',
    ),
  ESCALATOR_CI_OIDC_OWNERS: z
    .string()
    .regex(
      /^\s*[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*\s*$/,
      'must be GitHub owner logins separated by commas, such as "acme,example"',
    )
    .optional()
    .describe(
      "Comma-separated GitHub owners whose workflows may announce images with OIDC. Unset (and ESCALATOR_CI_OIDC_REPOSITORIES unset): any workflow, each only into its own owner's repositories.",
    ),
  ESCALATOR_CI_OIDC_REPOSITORIES: z
    .string()
    .regex(
      /^\s*[A-Za-z0-9-]+\/[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9-]+\/[A-Za-z0-9._-]+)*\s*$/,
      'must be owner/name repositories separated by commas, such as "acme/api,acme/web"',
    )
    .optional()
    .describe(
      'Comma-separated repositories (`owner/name`) whose workflows may announce images with OIDC, beside ESCALATOR_CI_OIDC_OWNERS.',
    ),
  ESCALATOR_GAR_AUDIENCE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Audience of the Pub/Sub push subscription's OIDC token (Google Artifact Registry). With ESCALATOR_GAR_SERVICE_ACCOUNT it enables `POST /registry/gar`.",
    ),
  ESCALATOR_GAR_SERVICE_ACCOUNT: z
    .email()
    .optional()
    .describe('Service account e-mail the Pub/Sub push subscription signs its OIDC token as.'),
  ESCALATOR_GAR_JWKS_URL: z
    .string()
    .min(1)
    .default('https://www.googleapis.com/oauth2/v3/certs')
    .describe(
      "Where Google's token signing keys are read from (a URL, or a file path). @default https://www.googleapis.com/oauth2/v3/certs",
    ),
  ESCALATOR_DEBOUNCE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(1_500)
    .describe(
      'Coalescing window for bumps: pushes to one environment and app within it become one commit; each push extends it. @default 1500',
    ),
  ESCALATOR_DASHBOARD_DEBOUNCE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(2_000)
    .describe(
      'How long changes to one repository gather before its dashboard issue is rendered again (one render for them all). Tests lower it. @default 2000',
    ),
  ESCALATOR_GITHUB_WRITES_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(72)
    .describe(
      "GitHub writes (content-creating requests) per installation a minute, shared by all workers; routine work uses at most 5/6 of it, leaving the rest for people's commands. GitHub's secondary limit is 80; raise it only on a GitHub Enterprise Server with other limits. @default 72",
    ),
  ESCALATOR_GITHUB_WRITES_PER_HOUR: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(460)
    .describe(
      "GitHub writes per installation an hour, shared by all workers; routine work uses at most 5/6 of it. GitHub's secondary limit is 500. @default 460",
    ),
  ESCALATOR_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}-]{1,64}$/, 'use letters, digits, "-", "_" and {} (no ":")')
    .default('escalator')
    .describe(
      'Prefix of every Redis key (queues, index, leases); lets several installations share one Redis. @default escalator',
    ),
  ESCALATOR_LOCK_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(600_000)
    .default(30_000)
    .describe(
      'How long a crashed worker can hold a job or a repository lease before another worker takes over. @default 30000',
    ),
  ESCALATOR_BUSY_RETRY_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(1_000)
    .describe(
      'How long a job waits before it tries again when another job holds its repository, plus up to twice that at random; a job that yields its worker to another installation waits a quarter of it. Tests lower it. @default 1000',
    ),
  ESCALATOR_RELAY_TARGETS: z
    .string()
    .min(1)
    .optional()
    .describe('Argo CD / Flux relay targets as JSON text (see docs/relay.md). Unset: pushes are not relayed.'),
  ESCALATOR_RELAY_TARGETS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe('Path of a YAML or JSON file of relay targets; set at most one of ESCALATOR_RELAY_TARGETS and this.'),
  ESCALATOR_ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters: it guards the operator endpoints')
    .optional()
    .describe(
      'Bearer token for operator endpoints (`/admin/relay/deliveries`, the queue dashboard). They answer 404 while unset.',
    ),
  ESCALATOR_AGENT_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters: it is the only thing that authenticates agent reports')
    .optional()
    .describe(
      'Secret shared with the in-cluster agents that report sync and health (docs/health.md): the HMAC key of the Flux `generic-hmac` Provider on `POST /agents/flux`, and the bearer token of the Argo CD Notifications webhook on `POST /agents/argocd`. Both routes answer 404 while unset.',
    ),
  ESCALATOR_RECOVER_EVERY_MS: z.coerce
    .number()
    .int()
    .min(10_000)
    .default(10 * 60_000)
    .describe(
      'How often failed GitHub webhook deliveries of the last 24 hours are redelivered (GitHub does not retry them). @default 600000',
    ),
  ESCALATOR_CACHE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Where repository tarballs (by commit SHA) and renders are cached for rendered diffs. @default <tmpdir>/escalator-cache',
    ),
  ESCALATOR_RENDER_ISOLATION: z
    .enum(['namespace', 'proxy'])
    .default('namespace')
    .describe(
      'How kustomize and helm are kept off the network and away from every file but their checkout. `namespace`: new user, network and mount namespaces with only the checkout and the tool binaries visible (the container must allow user namespaces; see docs/operations.md). `proxy`: a fallback where they are forbidden: every proxy variable points at a closed port and the tool runs on a private copy of its checkout; it does not stop loopback fetches or absolute paths (docs/operations.md lists its gaps). When the mode does not work on the worker, every render is refused. @default namespace',
    ),
  ESCALATOR_HELM_PATH: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The helm binary renders use (a file, or a directory holding `helm`), instead of the first `helm` on PATH; helm 3 and 4 both work. When it is not an executable, charts are not rendered and each chart says why. @default the helm on PATH',
    ),
  ESCALATOR_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024)
    .describe('Largest request body intake accepts; larger ones get 413. @default 1048576'),
  ESCALATOR_WEBHOOK_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(100 * 1024 * 1024)
    .describe(
      "Most bytes of GitHub webhook bodies held at once before their signatures are checked, across all connections; past it a delivery gets 503 with Retry-After (the recovery job redelivers it). Each delivery may be up to 25 MB, GitHub's own limit. @default 104857600",
    ),
});

export type Env = z.infer<typeof EnvSchema>;
