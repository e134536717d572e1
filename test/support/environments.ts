/**
 * The repository most end-to-end tests start from: environments in a chain (dev takes images
 * from the registry, each next one promotes from the one before), one kustomize overlay per app
 * and environment under `apps/<app>/overlays/<environment>`, indexed before the test acts.
 */
import { waitIndexed, type Stack } from './stack.js';

export const threeEnvironments = ['dev', 'staging', 'prod'] as const;

/**
 * `.github/escalator.yml` for a chain of environments: `head` before `environments:`, `extra[name]`
 * (indented lines) after that environment's `from:`, `tail` at the end.
 */
export function chainConfig(
  options: { environments?: readonly string[]; head?: string; extra?: Record<string, string>; tail?: string } = {},
): string {
  const { environments = threeEnvironments, head = '', extra = {}, tail = '' } = options;
  const entries = environments.map(
    (name, i) =>
      `  - name: ${name}\n    paths: ["apps/*/overlays/${name}"]\n    from: ${i === 0 ? 'registry' : environments[i - 1]}\n${extra[name] ?? ''}`,
  );
  return `${head}environments:\n${entries.join('')}${tail}`;
}

/** One app's overlay in each environment: the same text everywhere, or one text per environment. */
export function overlays(
  app: string,
  text: string | Record<string, string>,
  environments: readonly string[] = threeEnvironments,
): Record<string, string> {
  return Object.fromEntries(
    environments.map((name) => [
      `apps/${app}/overlays/${name}/kustomization.yaml`,
      typeof text === 'string' ? text : (text[name] ?? ''),
    ]),
  );
}

/** Creates `repo` (the developer's) with its configuration and files, and waits until Escalator has indexed it. */
export async function seedRepo(
  stack: Stack,
  repo: string,
  config: string,
  files: Record<string, string>,
  options: { collaborators?: Record<string, 'read' | 'triage' | 'write' | 'maintain' | 'admin'> } = {},
): Promise<void> {
  await stack.client.createRepo({
    name: repo,
    ...(options.collaborators ? { collaborators: options.collaborators } : {}),
    files: { '.github/escalator.yml': config, ...files },
  });
  await waitIndexed(stack, 'developer', repo);
}
