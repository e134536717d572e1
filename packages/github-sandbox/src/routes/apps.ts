import type { SandboxContext } from '../context.js';
import {
  bodyOf,
  HttpError,
  json,
  notFound,
  paginate,
  validationFailed,
  type ApiRequest,
  type Router,
} from '../http.js';
import { repoShape } from '../shapes/repos.js';
import { appShape, installationShape } from '../shapes/users.js';
import { isoTime } from '../urls.js';
import type { DeliveryRecord } from '../webhooks.js';
import { listField, requireApp } from './common.js';

/** `/app`, installations, installation tokens, and the App's webhook delivery log. */
export function registerAppRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const installation = (request: ApiRequest) => {
    const found = state.installations.get(Number(request.params.installation_id));
    if (!found) throw notFound();
    return found;
  };

  router.add('GET', '/app', (request) => {
    requireApp(request);
    return json(200, { ...appShape(urls, state.requireApp()), installations_count: state.installations.size });
  });

  router.add('GET', '/app/installations', (request) => {
    requireApp(request);
    const all = [...state.installations.values()].map((i) => installationShape(urls, state.requireApp(), i));
    const page = paginate(request, all);
    return json(200, page.items, page.headers);
  });

  router.add('GET', '/app/installations/:installation_id', (request) => {
    requireApp(request);
    return json(200, installationShape(urls, state.requireApp(), installation(request)));
  });

  router.add('POST', '/app/installations/:installation_id/access_tokens', (request) => {
    requireApp(request);
    const target = installation(request);
    const body = bodyOf(request);
    const names = listField(body, 'repositories');
    const ids = Array.isArray(body.repository_ids) ? body.repository_ids.map(Number) : [];
    const repos = [...target.repositoryIds].flatMap((id) => state.repoById(id) ?? []);
    const chosen = repos.filter((repo) => names.includes(repo.name) || ids.includes(repo.id));
    if (chosen.length !== names.length + ids.length) {
      throw validationFailed(
        [],
        'There is at least one repository that does not exist or is not accessible to the parent installation.',
      );
    }
    const limited = names.length + ids.length > 0;
    const token = state.issueInstallationToken(target, limited ? new Set(chosen.map((repo) => repo.id)) : null);
    return json(201, {
      token: token.token,
      expires_at: isoTime(token.expiresAt),
      permissions: state.requireApp().permissions,
      repository_selection: 'selected',
      ...(limited ? { repositories: chosen.map((repo) => repoShape(urls, repo)) } : {}),
    });
  });

  router.add('GET', '/repos/:owner/:repo/installation', (request) => {
    requireApp(request);
    const repo = state.repo(request.params.owner ?? '', request.params.repo ?? '');
    const found = repo && state.installationForRepo(repo);
    if (!found) throw notFound();
    return json(200, installationShape(urls, state.requireApp(), found));
  });

  router.add('GET', '/installation/repositories', (request) => {
    const principal = request.principal;
    if (principal?.kind !== 'installation')
      throw new HttpError(403, 'This endpoint needs an installation access token.');
    const token = state.installationTokens.get(principal.token);
    const repos = [...principal.installation.repositoryIds]
      .filter((id) => !token?.repositoryIds || token.repositoryIds.has(id))
      .flatMap((id) => state.repoById(id) ?? []);
    const page = paginate(request, repos);
    return json(
      200,
      {
        total_count: repos.length,
        repository_selection: 'selected',
        repositories: page.items.map((repo) => repoShape(urls, repo)),
      },
      page.headers,
    );
  });

  registerDeliveryRoutes(router, context);
}

function deliveryItem(delivery: DeliveryRecord): Record<string, unknown> {
  return {
    id: delivery.id,
    guid: delivery.guid,
    delivered_at: isoTime(delivery.deliveredAt),
    redelivery: delivery.redelivery,
    duration: delivery.duration,
    status: delivery.status,
    status_code: delivery.statusCode,
    event: delivery.event,
    action: delivery.action,
    installation_id: delivery.installationId,
    repository_id: delivery.repositoryId,
    throttled_at: null,
  };
}

/** `GET /app/hook/deliveries` (cursor pagination, newest first), one delivery, redelivery. */
function registerDeliveryRoutes(router: Router, context: SandboxContext): void {
  const { webhooks } = context;
  router.add('GET', '/app/hook/deliveries', (request) => {
    requireApp(request);
    const perPage = Math.min(Math.max(Number(request.url.searchParams.get('per_page')) || 30, 1), 100);
    const cursor = request.url.searchParams.get('cursor');
    const all = webhooks.deliveries;
    const start = cursor ? all.findIndex((delivery) => String(delivery.id) === cursor) : 0;
    const items = start === -1 ? [] : all.slice(start, start + perPage);
    const next = start === -1 ? undefined : all[start + perPage];
    const headers: Record<string, string> = {};
    if (next) {
      const url = new URL(request.url);
      url.searchParams.set('per_page', String(perPage));
      url.searchParams.set('cursor', String(next.id));
      headers.link = `<${url.toString()}>; rel="next"`;
    }
    return json(200, items.map(deliveryItem), headers);
  });

  router.add('GET', '/app/hook/deliveries/:delivery_id', (request) => {
    requireApp(request);
    const delivery = webhooks.deliveries.find((d) => d.id === Number(request.params.delivery_id));
    if (!delivery) throw notFound();
    return json(200, {
      ...deliveryItem(delivery),
      url: delivery.url ?? undefined,
      request: { headers: delivery.request.headers, payload: delivery.request.payload },
      response: { headers: delivery.response.headers, payload: delivery.response.payload },
    });
  });

  router.add('POST', '/app/hook/deliveries/:delivery_id/attempts', (request) => {
    requireApp(request);
    if (!webhooks.redeliver(Number(request.params.delivery_id))) throw notFound();
    return json(202, {});
  });
}
