import { fullName, type SandboxContext } from '../context.js';
import { bodyOf, field, HttpError, json, paginate, validationFailed, type ApiRequest, type Router } from '../http.js';
import type { SandboxLabel, SandboxRepo } from '../model.js';
import { labelShape } from '../shapes/issues.js';
import { requireAppPermission, requireRepo } from './common.js';

/**
 * A repository's labels (`/repos/{owner}/{repo}/labels`), as the labels and errors recordings
 * of @octokit/fixtures show them: listed by name, `color` six hex digits (a leading `#` is
 * refused), 422 `invalid` for a bad color and `already_exists` for a taken name.
 */
export function registerLabelRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const shape = (repo: SandboxRepo, label: SandboxLabel) => labelShape(urls, fullName(repo), label);
  const requireLabel = (repo: SandboxRepo, request: ApiRequest) => {
    const label = repo.labels.get((request.params.name ?? '').toLowerCase());
    if (!label) throw new HttpError(404, 'Not Found');
    return label;
  };
  const writable = (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'issues', 'write');
    return repo;
  };

  router.add('GET', '/repos/:owner/:repo/labels', (request) => {
    const repo = requireRepo(context, request, 'read');
    const labels = [...repo.labels.values()].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
    const page = paginate(request, labels);
    return json(
      200,
      page.items.map((label) => shape(repo, label)),
      page.headers,
    );
  });

  router.add('GET', '/repos/:owner/:repo/labels/:name', (request) => {
    const repo = requireRepo(context, request, 'read');
    return json(200, shape(repo, requireLabel(repo, request)));
  });

  router.add('POST', '/repos/:owner/:repo/labels', (request) => {
    const repo = writable(request);
    const body = bodyOf(request);
    const name = field(body, 'name', { required: true });
    const color = colorOf(field(body, 'color')) ?? 'ededed';
    if (repo.labels.has(name.toLowerCase()))
      throw validationFailed([{ resource: 'Label', code: 'already_exists', field: 'name' }]);
    const label: SandboxLabel = {
      id: state.nextId(),
      name,
      color,
      description: field(body, 'description') ?? null,
      default: false,
    };
    repo.labels.set(name.toLowerCase(), label);
    return json(201, shape(repo, label));
  });

  router.add('PATCH', '/repos/:owner/:repo/labels/:name', (request) => {
    const repo = writable(request);
    const label = requireLabel(repo, request);
    const body = bodyOf(request);
    const newName = field(body, 'new_name');
    const color = colorOf(field(body, 'color'));
    if (newName !== undefined && newName.toLowerCase() !== label.name.toLowerCase()) {
      if (repo.labels.has(newName.toLowerCase()))
        throw validationFailed([{ resource: 'Label', code: 'already_exists', field: 'name' }]);
      repo.labels.delete(label.name.toLowerCase());
      repo.labels.set(newName.toLowerCase(), label);
    }
    if (newName !== undefined) {
      renameOnRecords(context, repo, label.name, newName);
      label.name = newName;
    }
    if (color !== undefined) label.color = color;
    if (body.description !== undefined) label.description = field(body, 'description') ?? null;
    return json(200, shape(repo, label));
  });

  router.add('DELETE', '/repos/:owner/:repo/labels/:name', (request) => {
    const repo = writable(request);
    const label = requireLabel(repo, request);
    repo.labels.delete(label.name.toLowerCase());
    const key = label.name.toLowerCase();
    for (const record of [...state.issuesOf(repo), ...state.pullsOf(repo)])
      record.labels = record.labels.filter((name) => name.toLowerCase() !== key);
    return { status: 204 };
  });
}

/**
 * A label color: six hex digits, kept as given (`BADA55` stays upper case in the labels
 * recording); GitHub refuses anything else (the errors recording).
 */
function colorOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9a-fA-F]{6}$/.test(value)) throw validationFailed([{ resource: 'Label', code: 'invalid', field: 'color' }]);
  return value;
}

/** Issues and pull requests name their labels; a renamed label follows. */
function renameOnRecords(context: SandboxContext, repo: SandboxRepo, from: string, to: string): void {
  const key = from.toLowerCase();
  for (const record of [...context.state.issuesOf(repo), ...context.state.pullsOf(repo)])
    record.labels = record.labels.map((name) => (name.toLowerCase() === key ? to : name));
}
