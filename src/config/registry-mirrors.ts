/**
 * `ESCALATOR_REGISTRY_MIRRORS`: registry hosts read from another registry, as a JSON object of
 * host → base URL (`{"ghcr.io": "http://127.0.0.1:5000"}`). When it is set, Escalator contacts
 * no registry host it does not name (`npm run sandbox` sets it so nothing leaves the machine).
 * Returns the map, or every problem in words (never a credential: the URLs may not hold one).
 */
export function parseRegistryMirrors(
  text: string | undefined,
): { ok: true; mirrors: ReadonlyMap<string, URL> | undefined } | { ok: false; problems: string[] } {
  if (text === undefined || text.trim() === '') return { ok: true, mirrors: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {
      ok: false,
      problems: ['is not JSON: write an object of registry host to URL, e.g. {"ghcr.io": "http://127.0.0.1:5000"}'],
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return {
      ok: false,
      problems: ['must be a JSON object of registry host to URL, e.g. {"ghcr.io": "http://127.0.0.1:5000"}'],
    };
  const mirrors = new Map<string, URL>();
  const problems: string[] = [];
  for (const [host, value] of Object.entries(parsed)) {
    if (!/^[a-z0-9.-]+(:\d+)?$/i.test(host)) {
      problems.push(`"${host}" is not a registry host (host[:port], e.g. ghcr.io)`);
      continue;
    }
    let url: URL | undefined;
    try {
      url = typeof value === 'string' ? new URL(value) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      problems.push(`the mirror of ${host} must be an http(s) URL, e.g. "http://127.0.0.1:5000"`);
      continue;
    }
    if (url.username || url.password || url.search || url.hash) {
      problems.push(
        `the mirror of ${host} must be a plain URL without credentials, query or fragment (credentials go in ESCALATOR_REGISTRY_AUTH_FILE)`,
      );
      continue;
    }
    mirrors.set(host.toLowerCase(), url);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, mirrors };
}
