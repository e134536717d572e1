import { probeIsolation, type RenderIsolationMode } from '../adapters/render/index.js';

/**
 * What `proxy` render isolation does not stop (docs/security.md, "Renders"; docs/operations.md,
 * "The proxy fallback and its gaps"), said at start and in `/readyz` wherever it is chosen.
 */
export const PROXY_ISOLATION_GAPS = [
  'loopback: Go never proxies localhost or 127.0.0.1, so a kustomization can fetch from anything listening on the worker pod',
  'raw sockets: only clients that honour the proxy variables are covered',
  'absolute paths: the tool sees the whole file system the worker user can read',
] as const;

/** The start-up warning of a worker whose operator chose `proxy` (ESCALATOR_RENDER_ISOLATION=proxy). */
export const PROXY_ISOLATION_WARNING =
  'Render isolation is proxy (ESCALATOR_RENDER_ISOLATION=proxy): kustomize and helm run without namespaces, and this does not stop loopback fetches, raw sockets or absolute paths. Use namespace wherever the container allows user namespaces (docs/operations.md, "Render isolation")';

/** What a logger needs here (pino's signature). */
interface WarnLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Say at start, on every process that renders, that `proxy` was chosen and what it leaves open.
 * `namespace` (the default) needs no notice here: its probe warns when it cannot work
 * (`warnIfRenderIsolationUnavailable`), and nothing ever falls back to `proxy` by itself.
 */
export function warnIfProxyIsolation(log: WarnLog, mode: RenderIsolationMode): void {
  if (mode !== 'proxy') return;
  log.warn({ mode, gaps: [...PROXY_ISOLATION_GAPS], docs: 'docs/security.md' }, PROXY_ISOLATION_WARNING);
}

/**
 * The `renderIsolation` detail of `/readyz` on a process that renders: the mode, and in `proxy`
 * what it does not stop; in `namespace`, whether the sandbox works on this worker (the probe is
 * run once per process and cached). It never makes the worker unready: bumps and promotions work
 * without renders, and a render without isolation is refused on its own.
 */
export function renderIsolationCheck(mode: RenderIsolationMode): () => Promise<string> {
  return async () => {
    if (mode === 'proxy')
      return `proxy, chosen by ESCALATOR_RENDER_ISOLATION; it does not stop ${PROXY_ISOLATION_GAPS.join('; ')}. Use namespace where user namespaces are allowed (docs/security.md)`;
    const status = await probeIsolation({ mode });
    return status.available
      ? 'namespace: ok'
      : `namespace, not available on this worker (${status.reason}): every kustomize and helm render is refused; give the worker deploy/seccomp/escalator-worker.json (docs/operations.md, "Render isolation")`;
  };
}
