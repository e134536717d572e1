import type { IncomingHttpHeaders } from 'node:http';
import type { Principal } from './model.js';

export const DOCS_URL = 'https://docs.github.com/enterprise-server@3.17/rest';

/** A request after routing: parsed JSON body, decoded path parameters, who is calling. */
export interface ApiRequest {
  method: string;
  /** Full public URL, query included. */
  url: URL;
  headers: IncomingHttpHeaders;
  body: unknown;
  params: Record<string, string>;
  principal: Principal | null;
  /** Set by `paginate`: GitHub sends lists without `Last-Modified`. */
  paginated?: boolean;
}

/** What a handler answers: JSON `body`, or `raw` bytes/text with its own content type. */
export interface ApiResponse {
  status: number;
  body?: unknown;
  raw?: Buffer | string;
  headers?: Record<string, string>;
  /** false: answer without `Last-Modified`, as GitHub answers lists and the root index. */
  lastModified?: boolean;
}

export type Handler = (request: ApiRequest) => Promise<ApiResponse> | ApiResponse;

/** An error answered with GitHub's JSON error body (`message`, `documentation_url`, `status`). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }

  toBody(): Record<string, unknown> {
    return { message: this.message, documentation_url: DOCS_URL, status: String(this.status), ...this.extra };
  }
}

export function notFound(): HttpError {
  return new HttpError(404, 'Not Found');
}

/** 422 with GitHub's `errors` array, e.g. `{ resource: 'PullRequest', code: 'custom', message }`. */
export function validationFailed(errors: Record<string, unknown>[], message = 'Validation Failed'): HttpError {
  return new HttpError(422, message, errors.length ? { errors } : {});
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { status, body, headers };
}

interface Route {
  method: string;
  regex: RegExp;
  names: string[];
  handler: Handler;
}

/**
 * A tiny router: `:name` matches one path segment, `*name` the rest of the path (refs and
 * file paths contain slashes). Parameters are URI-decoded.
 */
export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    const names: string[] = [];
    const source = pattern
      .split('/')
      .map((segment) => {
        if (segment.startsWith(':')) {
          names.push(segment.slice(1));
          return '([^/]+)';
        }
        if (segment.startsWith('*')) {
          names.push(segment.slice(1));
          return '(.+)';
        }
        return segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    this.routes.push({ method, regex: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | null {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const found = route.regex.exec(path);
      if (!found) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, index) => {
        params[name] = decodeURIComponent(found[index + 1] ?? '');
      });
      return { handler: route.handler, params };
    }
    return null;
  }
}

/**
 * Slices a list by `page`/`per_page` (default 30 or `defaultPerPage`, at most 100) and builds GitHub's `Link`
 * header with `prev`, `next`, `first` and `last`. `linkBase` is the URL the links point at
 * when it is not the request's (GitHub's `/repositories/{id}/…` form).
 */
export function paginate<T>(
  request: ApiRequest,
  items: T[],
  linkBase?: string,
  options: { defaultPerPage?: number } = {},
): { items: T[]; headers: Record<string, string> } {
  request.paginated = true;
  const asked = Number(request.url.searchParams.get('per_page'));
  const perPage = asked ? Math.min(Math.max(asked, 1), 100) : (options.defaultPerPage ?? 30);
  const page = Math.max(Number(request.url.searchParams.get('page')) || 1, 1);
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const link = (n: number, rel: string) => {
    const url = new URL(request.url);
    if (linkBase !== undefined) url.pathname = new URL(linkBase).pathname;
    url.searchParams.set('per_page', String(perPage));
    url.searchParams.set('page', String(n));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  const headers: Record<string, string> = links.length ? { link: links.join(', ') } : {};
  return { items: items.slice((page - 1) * perPage, page * perPage), headers };
}

/** Reads a string field of a JSON body, or answers 422 naming the field. */
export function field(body: unknown, name: string, options: { required: true }): string;
export function field(body: unknown, name: string, options?: { required?: boolean }): string | undefined;
export function field(body: unknown, name: string, options: { required?: boolean } = {}): string | undefined {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  if (value === undefined || value === null) {
    if (options.required)
      throw validationFailed(
        [{ resource: 'Request', field: name, code: 'missing_field' }],
        `Invalid request.\n\n"${name}" wasn't supplied.`,
      );
    return undefined;
  }
  if (typeof value !== 'string') {
    throw validationFailed([], `Invalid request.\n\nFor '${name}', ${JSON.stringify(value)} is not a string.`);
  }
  return value;
}

/** The JSON body as an object (empty when absent). */
export function bodyOf(request: ApiRequest): Record<string, unknown> {
  return request.body && typeof request.body === 'object' && !Array.isArray(request.body)
    ? (request.body as Record<string, unknown>)
    : {};
}
