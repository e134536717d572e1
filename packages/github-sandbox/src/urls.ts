/**
 * URLs the simulator puts in its responses, GitHub Enterprise style: the web UI at the root
 * (`html_url`), the REST API under `/api/v3`.
 */
export class Urls {
  constructor(readonly origin: string) {}

  /** `http://host:port/api/v3` — what octokit and probot take as `baseUrl`. */
  get apiBase(): string {
    return `${this.origin}/api/v3`;
  }

  api(path: string): string {
    return `${this.apiBase}${path}`;
  }

  html(path: string): string {
    return `${this.origin}${path}`;
  }

  repoApi(fullName: string, path = ''): string {
    return this.api(`/repos/${fullName}${path}`);
  }

  repoHtml(fullName: string, path = ''): string {
    return this.html(`/${fullName}${path}`);
  }
}

/** GitHub's timestamp format: ISO 8601 in UTC without milliseconds. */
export function isoTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A GraphQL-style node id; opaque to clients, stable per type and id. */
export function nodeId(type: string, id: number | string): string {
  return Buffer.from(`0:${type}${id}`).toString('base64').replace(/=+$/, '');
}
