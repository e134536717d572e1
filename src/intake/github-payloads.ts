import { z } from 'zod';

/**
 * The fields Escalator's GitHub handlers read, per event. A signed delivery whose payload lacks
 * them is answered 400 with the path, instead of letting a handler trip over it (a 500 GitHub
 * would show as a failed delivery for a payload it never sends).
 */
const repository = z.object({
  name: z.string(),
  full_name: z.string().optional(),
  owner: z.object({ login: z.string() }).nullable().optional(),
});
const installation = z.object({ id: z.number() });
const fullName = z.object({ full_name: z.string().regex(/^[^/]+\/[^/]+$/, 'must be owner/name') });

const paths = z.array(z.string()).optional();
/** What the relay reads of a push to choose targets by changed path (src/intake/relay-intake.ts). */
const pushCommit = z.object({ added: paths, modified: paths, removed: paths });

const schemas: Record<string, z.ZodType> = {
  push: z.object({
    ref: z.string(),
    before: z.string().optional(),
    after: z.string().optional(),
    size: z.number().optional(),
    commits: z.array(pushCommit).optional(),
    repository: repository.extend({ full_name: z.string() }),
    installation: installation.optional(),
  }),
  pull_request: z.object({
    action: z.string(),
    pull_request: z.object({
      number: z.number(),
      head: z.object({ sha: z.string() }),
      body: z.string().nullable().optional(),
    }),
    repository: repository.extend({ full_name: z.string(), owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
  installation: z.object({ action: z.string(), installation, repositories: z.array(fullName).optional() }),
  installation_repositories: z.object({
    action: z.string(),
    installation,
    repositories_added: z.array(fullName).optional(),
    repositories_removed: z.array(fullName).optional(),
  }),
  issue_comment: z.object({
    action: z.string(),
    comment: z.object({
      id: z.number().int().positive(),
      created_at: z.string().datetime({ offset: true }),
      body: z.string(),
      user: z.object({ login: z.string(), type: z.string().optional() }).nullable(),
    }),
    issue: z.object({ number: z.number(), body: z.string().nullable().optional() }),
    repository: repository.extend({ owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
  // A box ticked on the dashboard issue (docs/controls.md): `edited` with the body before the edit.
  issues: z.object({
    action: z.string(),
    issue: z.object({
      number: z.number(),
      body: z.string().nullable().optional(),
      updated_at: z.string(),
      user: z.object({ login: z.string() }).nullable().optional(),
    }),
    changes: z.object({ body: z.object({ from: z.string() }).optional() }).optional(),
    sender: z.object({ login: z.string(), type: z.string().optional() }),
    repository: repository.extend({ owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
  check_run: z.object({
    action: z.string(),
    check_run: z.object({
      name: z.string(),
      head_sha: z.string(),
      status: z.string(),
      conclusion: z.string().nullable().optional(),
      started_at: z.string().nullable().optional(),
      completed_at: z.string().nullable().optional(),
      details_url: z.string().nullable().optional(),
      html_url: z.string().nullable().optional(),
      output: z
        .object({ title: z.string().nullable().optional(), summary: z.string().nullable().optional() })
        .nullable()
        .optional(),
      pull_requests: z.array(z.object({ number: z.number() })),
    }),
    repository: repository.extend({ owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
  // Agents' reports as GitHub carries them (src/events/agents/github.ts reads these fields).
  status: z.object({
    sha: z.string(),
    context: z.string(),
    state: z.string(),
    description: z.string().nullable().optional(),
    target_url: z.string().nullable().optional(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
    repository: repository.extend({ owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
  deployment_status: z.object({
    deployment_status: z.object({
      state: z.string(),
      description: z.string().nullable().optional(),
      environment: z.string().optional(),
      target_url: z.string().nullable().optional(),
      log_url: z.string().nullable().optional(),
      environment_url: z.string().nullable().optional(),
      created_at: z.string().optional(),
      updated_at: z.string().optional(),
    }),
    deployment: z.object({
      sha: z.string(),
      environment: z.string(),
      performed_via_github_app: z.object({ id: z.number() }).nullable().optional(),
    }),
    repository: repository.extend({ owner: z.object({ login: z.string() }) }),
    installation: installation.optional(),
  }),
};

/** `undefined` when the payload has what the handlers read, else what is wrong. */
export function checkGitHubPayload(event: string, payload: unknown): string | undefined {
  const schema = schemas[event];
  if (!schema) return undefined;
  const result = schema.safeParse(payload);
  if (result.success) return undefined;
  const issue = result.error.issues[0]!;
  return `the ${event} payload is not what GitHub sends: ${issue.path.join('.') || '(root)'}: ${issue.message}`;
}
