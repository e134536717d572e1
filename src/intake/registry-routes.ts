import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isRegistrySource,
  JSON_CONTENT_TYPES,
  normalizeCiImage,
  registryOf,
  registrySources,
  type NormalizeResult,
  type RegistryAuth,
} from '../events/index.js';
import { REFUSED_FOR_SENDER, type ImageJobResult, type ImageTarget } from '../events/outcome.js';
import { forecastImage, withinScope, type ImageForecast } from '../events/image-forecast.js';
import type { EventScope, ImagePublished } from '../events/image-published.js';
import type { RepoState } from '../adapters/store/repo-state.js';
import { bumpBranch } from '../planners/bump-plan.js';
import { normalizeName, sameRepository } from '../planners/image-ref.js';
import { parseMarker } from '../planners/pull-marker.js';
import type { Logger } from '../observability/logger.js';
import { intakeRequests } from '../observability/metrics.js';
import { enqueueImage } from '../queue/enqueue.js';
import { QueueUnavailableError, type DuplicateJob, type Producer } from '../queue/producer.js';
import { sendJson, type Handler } from '../web/server.js';
import { imageAllowed, IntakeCredentials, type Authenticated } from './credentials.js';
import { HttpError, parseJson, readBody, requireContentType, requireMethod, sendRefusal } from './http.js';
import { bearerToken, looksLikeJwt } from './jwt.js';

export type IntakeOutcome =
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'too-large'
  | 'unsupported-media'
  | 'unavailable'
  | 'method'
  | 'not-found';

export interface RegistryRouteOptions {
  producer: Producer;
  log: Logger;
  maxBodyBytes: number;
  /** Legacy global token for registry routes (every owner); a route answers 404 while no credential is accepted on it. */
  registryToken?: string;
  /** Legacy global bearer token for the CI API (every owner). */
  ciToken?: string;
  /** Scoped tokens (src/intake/credentials.ts): each bound to GitHub owners, optionally images and sources. */
  credentials?: IntakeCredentials['entries'];
  /** Verifies the Google-signed OIDC token of Pub/Sub push deliveries (gar). */
  verifyGoogleToken?: (authorization: string | undefined) => Promise<void>;
  /** Verifies a GitHub Actions OIDC token on the CI API and says whose repositories its events may change. */
  verifyGitHubToken?: (token: string) => Promise<Authenticated>;
  onOutcome?: (source: string, outcome: IntakeOutcome, detail?: string) => void;
  now?: () => Date;
  /**
   * The subscription index and living pull requests in Redis: the answer says from them what will
   * happen to each image, and the status route what did. Without it the answer says neither.
   */
  store?: Pick<RepoState, 'subscriptions' | 'living'>;
  /** The host of GitHub's web URLs (pull request links in the status): github.com unless Enterprise. */
  githubHost?: string;
}

/** At most this many repositories of the sender's scope are read for one image's answer (the intake stays fast). */
const FORECAST_REPOS = 50;

/**
 * `POST /registry/<source>` and `POST /api/v1/images`. Each request goes through the same steps:
 * method → content type (415) → authentication (401; 403 for a credential not allowed on the
 * route) → size (413) → parse and validate (400) → normalize → images within the credential's
 * prefixes (403) → enqueue with the credential's scope (503 when Redis cannot take it) → 202
 * only once Redis holds every job; 200 `duplicate` when every event was seen already (with when,
 * and what it led to). The answer names the owners the events may change.
 * What differs between registries (authentication, content types, normalizer) is read from the
 * registry table (src/events/registries/index.ts).
 */
export function registryRoutes(options: RegistryRouteOptions): Handler {
  const now = options.now ?? (() => new Date());
  const credentials = new IntakeCredentials(options.credentials ?? [], {
    ...(options.registryToken ? { registryToken: options.registryToken } : {}),
    ...(options.ciToken ? { ciToken: options.ciToken } : {}),
  });
  const count = (source: string, outcome: IntakeOutcome, detail?: string): void => {
    intakeRequests.inc({ source: source === 'ci' || isRegistrySource(source) ? source : 'unknown', outcome });
    options.onOutcome?.(source, outcome, detail);
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let source: string;
    let pathToken: string | undefined;
    let bodyRead = false;
    let statusOf: string | undefined;
    const status = /^\/(?:api\/v1\/images|registry\/([a-z]+)(?:\/([^/]+))?)\/status\/([^/]+)$/.exec(path);
    if (status) {
      source = status[1] ?? 'ci';
      pathToken = status[2];
      // Job ids hold no character that needs escaping: anything escaped is no job's id (answered 404).
      statusOf = status[3] as string;
    } else if (path === '/api/v1/images') source = 'ci';
    else {
      const match = /^\/registry\/([a-z]+)(?:\/([^/]+))?\/?$/.exec(path);
      if (!match) return false;
      source = match[1] as string;
      pathToken = match[2];
    }
    try {
      const registry = source === 'ci' ? undefined : registryOf(source);
      if (source !== 'ci' && !registry)
        throw new HttpError(404, `unknown registry "${source}"; use one of ${registrySources.join(', ')}`);
      const auth: RegistryAuth = registry?.auth ?? 'bearer';
      if (
        source === 'ci'
          ? !options.verifyGitHubToken && !credentials.enabled('ci', false)
          : auth !== 'google-oidc' && !credentials.enabled(source, auth === 'path-token')
      ) {
        throw new HttpError(
          404,
          source === 'ci'
            ? 'the CI API is disabled; set ESCALATOR_CI_OIDC_AUDIENCE (GitHub Actions OIDC) or add an ESCALATOR_INTAKE_TOKENS entry for ci to enable it'
            : `${source} intake is disabled; add an ESCALATOR_INTAKE_TOKENS entry${auth === 'path-token' ? ` with sources: ["${source}"]` : ''} to enable it`,
        );
      }
      if (statusOf !== undefined) {
        requireMethod(req, 'GET');
        const authenticated = await authenticate(req, source, auth, pathToken, options, credentials);
        return sendJson(res, 200, await imageStatus(options, statusOf, authenticated.scope));
      }
      requireMethod(req, 'POST');
      requireContentType(req, registry?.contentTypes ?? JSON_CONTENT_TYPES);
      // Credentials come from the path and headers, so a sender without them is refused before
      // Escalator holds any of its body (the GitHub route must read first: its signature is over the body).
      const authenticated = await authenticate(req, source, auth, pathToken, options, credentials);
      const body = await readBody(req, options.maxBodyBytes);
      bodyRead = true;
      const payload = parseJson(body);
      const context = {
        deliveryId: headerOf(req, 'x-request-id') ?? headerOf(req, 'x-delivery-id') ?? randomUUID(),
        receivedAt: now().toISOString(),
      };
      const result: NormalizeResult = registry
        ? registry.normalize(payload, context)
        : normalizeCiImage(payload, context);
      if (result.kind === 'invalid') throw new HttpError(400, result.message);
      if (result.kind === 'ignored') {
        count(source, 'ignored', result.reason);
        return sendJson(res, 200, { ignored: result.reason, detail: result.detail });
      }
      const prefixes = authenticated.images;
      const outside = prefixes ? result.events.filter((event) => !imageAllowed(prefixes, event.repository)) : [];
      if (prefixes && outside.length > 0) {
        // Nothing of the request is kept: a sender announcing images it may not is misconfigured or hostile.
        throw new HttpError(
          403,
          `${authenticated.scope.by} may announce images under ${prefixes.join(', ')} only, not ${[...new Set(outside.map((event) => event.repository))].slice(0, 5).join(', ')}; nothing of this request was accepted. Ask an operator to add the prefix to the token's images`,
        );
      }
      const jobs: string[] = [];
      const duplicates: Array<{ image: string; job: string; firstSeenAt: string; state: string; outcome: string }> = [];
      const retried: string[] = [];
      for (const event of result.events) {
        const added = await enqueueImage(options.producer, event, authenticated.scope);
        jobs.push(added.id);
        const image = `${event.repository}:${event.tag}${event.digest ? `@${event.digest}` : ''}`;
        if (added.retried) retried.push(image);
        if (added.duplicate)
          duplicates.push({
            image,
            job: added.id,
            firstSeenAt: added.duplicate.firstSeenAt,
            state: added.duplicate.state,
            outcome: duplicateOutcome(added.duplicate),
          });
      }
      const accepted = result.events.length - duplicates.length;
      const { scope } = authenticated;
      const images = await forecasts(options, result.events, jobs, scope, statusPath(source, pathToken !== undefined));
      // What the events may change: a sender learns here, not from silence, that they apply only to these owners.
      const answer = {
        accepted,
        jobs,
        scope: { credential: scope.by, owners: scope.owners },
        ...(images ? { images } : {}),
        ...(duplicates.length ? { duplicate: duplicates.length, duplicates } : {}),
        ...(retried.length ? { retried } : {}),
        ...(result.ignored?.length ? { ignored: result.ignored } : {}),
      };
      if (accepted === 0) {
        count(source, 'duplicate');
        options.log.info(
          {
            source,
            deliveryId: context.deliveryId,
            by: scope.by,
            duplicates,
            ...(images ? { will: logged(images) } : {}),
          },
          'Registry event already seen: no new work',
        );
        return sendJson(res, 200, answer);
      }
      count(source, 'accepted');
      options.log.info(
        {
          source,
          deliveryId: context.deliveryId,
          by: scope.by,
          owners: scope.owners,
          images: result.events.map((e) => `${e.repository}:${e.tag}`),
          ...(images ? { will: logged(images) } : {}),
          ...(duplicates.length ? { duplicates } : {}),
          ...(retried.length ? { retried } : {}),
        },
        'Registry event accepted',
      );
      return sendJson(res, 202, answer);
    } catch (error) {
      if (error instanceof QueueUnavailableError) {
        count(source, 'unavailable');
        options.log.warn({ source, err: { message: error.message } }, 'Registry event not accepted: queue unavailable');
        return sendJson(res, 503, { error: `cannot accept the event now: ${error.message}` }, { 'retry-after': '5' });
      }
      if (error instanceof HttpError) {
        count(source, outcomeOf(error.status));
        return sendRefusal(req, res, error, bodyRead);
      }
      throw error;
    }
  };
}

/** One image of an answer: what will happen to it, and where to ask what did. */
type ImageAnswer = ImageForecast & { image: string; job: string; status: string; moreRepositories?: number };

/** Where the sender asks what became of a job (the same credential as the announce; a path token is the sender's own to put in). */
function statusPath(source: string, pathToken: boolean): (job: string) => string {
  const base = source === 'ci' ? '/api/v1/images' : `/registry/${source}${pathToken ? '/<token>' : ''}`;
  return (job) => `${base}/status/${encodeURIComponent(job)}`;
}

/**
 * What will happen to each image, from the subscription index in Redis only (no GitHub, no
 * registry: the intake answers before the work). Undefined without a store; an image whose index
 * cannot be read is `unknown`, and the event is accepted all the same (Redis holds its job).
 */
async function forecasts(
  options: RegistryRouteOptions,
  events: readonly ImagePublished[],
  jobs: readonly string[],
  scope: EventScope,
  status: (job: string) => string,
): Promise<ImageAnswer[] | undefined> {
  const subscriptions = options.store?.subscriptions;
  if (!subscriptions) return undefined;
  const answers: ImageAnswer[] = [];
  for (const [index, event] of events.entries()) {
    const job = jobs[index] as string;
    const name = normalizeName(event.repository) ?? event.repository;
    const image = `${event.repository}:${event.tag}${event.digest ? `@${event.digest}` : ''}`;
    let forecast: ImageForecast;
    let more = 0;
    try {
      const all = withinScope(scope, await subscriptions.reposUsing(name));
      const using = all.slice(0, FORECAST_REPOS);
      if (all.length > using.length) more = all.length - using.length;
      // Sent together: one round trip's wait for every repository, not one each.
      const repos = (await Promise.all(using.map((key) => subscriptions.loadRepo(key.owner, key.repo)))).filter(
        (repo) => repo !== null,
      );
      const indexBuilt = repos.length > 0 || (await subscriptions.isBuilt());
      forecast = forecastImage({ name, repository: event.repository, tag: event.tag, scope, repos, indexBuilt });
      if (more > 0 && forecast.will === 'nothing')
        forecast = {
          ...forecast,
          will: 'unknown',
          detail: `${forecast.detail}; ${more} more repositories use the image and were not read for this answer: the status URL gives the outcome`,
        };
    } catch (error) {
      options.log.warn(
        { err: { message: (error as Error).message }, image },
        'Could not read the index for the answer',
      );
      forecast = {
        will: 'unknown',
        detail: 'the index could not be read to say what will happen; the status URL gives the outcome',
        repositories: [],
      };
    }
    // Repositories past the first FORECAST_REPOS are counted, not read: the job still takes them.
    answers.push({ image, job, ...forecast, ...(more > 0 ? { moreRepositories: more } : {}), status: status(job) });
  }
  return answers;
}

/** The answer's forecast in a log line: the same words, without the per-repository detail. */
function logged(images: readonly ImageAnswer[]): unknown[] {
  return images.map((image) => ({
    image: image.image,
    will: image.will,
    ...(image.reason ? { reason: image.reason } : {}),
    repositories: image.repositories.map((repo) => repo.repository),
    detail: image.detail,
  }));
}

/**
 * What became of one image job, for the credential that announced it and no other: a job of
 * another credential is answered as one that does not exist. Repositories named are those of the
 * job's result, which holds the scope's only.
 */
async function imageStatus(options: RegistryRouteOptions, id: string, scope: EventScope): Promise<unknown> {
  const notFound = new HttpError(
    404,
    `no image event ${id} was announced with this credential (a finished one is kept a day); send the event again to learn what it does`,
  );
  if (!/^image__[0-9a-f]{64}__[0-9a-f]{32}$/.test(id)) throw notFound;
  let job;
  try {
    job = await options.producer.queue('image').getJob(id);
  } catch (error) {
    throw new QueueUnavailableError(`could not read the job from Redis (${(error as Error).message}); retry shortly`);
  }
  const data = job?.data as { event?: ImagePublished; scope?: EventScope } | undefined;
  if (!job || !data?.event || data.scope?.by !== scope.by) throw notFound;
  const { event } = data;
  const image = `${event.repository}:${event.tag}${event.digest ? `@${event.digest}` : ''}`;
  const state = await job.getState();
  // Read after the state: a job that completed meanwhile holds its result now.
  const result =
    state === 'completed' ? ((await options.producer.queue('image').getJob(id))?.returnvalue as unknown) : undefined;
  const base = { job: id, image, state };
  if (state === 'failed')
    return {
      ...base,
      outcome: 'failed',
      detail: 'the event failed after every retry; send it again to retry it (the worker log of the delivery says why)',
    };
  if (state !== 'completed')
    return { ...base, outcome: 'pending', detail: `it is ${state}; ask again in a few seconds` };
  if (isRefusal(result)) return { ...base, outcome: 'refused', detail: `it was refused: ${REFUSED_FOR_SENDER}` };
  const outcome = result as Partial<Extract<ImageJobResult, { scheduled: number }>> | number | undefined;
  if (typeof outcome !== 'object' || outcome === null || !Array.isArray(outcome.targets))
    return { ...base, outcome: 'done', detail: duplicateOutcome({ firstSeenAt: '', state, result }) };
  if (outcome.targets.length === 0)
    return {
      ...base,
      outcome: 'nothing',
      reason: outcome.nothing ?? 'no-environment',
      detail: nothingText(outcome.nothing),
    };
  const pulls = [];
  for (const target of outcome.targets) pulls.push(await pullFor(options, target, event));
  return {
    ...base,
    outcome: 'bump',
    detail: pulls.every((pull) => pull.pull)
      ? 'every target has a pull request proposing this image'
      : 'a bump is scheduled for each target; a target without `pull` has no pull request proposing this image yet (ask again after the debounce), or a later tag or a merge replaced it',
    targets: pulls,
  };
}

/** The living pull request of a target when its marker proposes the event's tag (Redis only). */
async function pullFor(
  options: RegistryRouteOptions,
  target: ImageTarget,
  event: ImagePublished,
): Promise<{ repository: string; environment: string; app: string; pull?: { number: number; url: string } }> {
  const where = { repository: `${target.owner}/${target.repo}`, environment: target.environment, app: target.app };
  const living = options.store?.living;
  if (!living) return where;
  const base = bumpBranch(target.environment, target.app);
  const record = await living.loadLiving(target, base);
  const own = record.branches[record.at ?? base];
  const marker = parseMarker(own?.marker);
  if (!own?.pull || !marker?.images.some((i) => sameRepository(i.repository, event.repository) && i.tag === event.tag))
    return where;
  return {
    ...where,
    pull: {
      number: own.pull,
      url: `https://${options.githubHost ?? 'github.com'}/${target.owner}/${target.repo}/pull/${own.pull}`,
    },
  };
}

function nothingText(reason: string | undefined): string {
  switch (reason) {
    case 'tag-policy':
      return "nothing changed: the tag policy of every repository of the credential's scope that uses the image refuses this tag";
    case 'config-invalid':
      return "nothing changed: the repositories of the credential's scope that use the image have an invalid .github/escalator.yml";
    default:
      return "nothing changed: no environment in a repository of the credential's scope takes this image from the registry";
  }
}

/** What became of the first delivery of an event sent again, in words for the sender. */
function duplicateOutcome(duplicate: DuplicateJob): string {
  switch (duplicate.state) {
    case 'completed':
      // The stored reason is never replayed: a job stored by an earlier version held the digest a
      // tag points at, which the sender did not send (the worker's log keeps the reason).
      if (isRefusal(duplicate.result)) return `it was refused: ${REFUSED_FOR_SENDER}`;
      if (isScheduled(duplicate.result))
        return duplicate.result.scheduled === 0
          ? nothingText(duplicate.result.nothing).replace('nothing changed', 'it changed nothing')
          : `it scheduled ${duplicate.result.scheduled} bump${duplicate.result.scheduled === 1 ? '' : 's'}`;
      return typeof duplicate.result === 'number'
        ? duplicate.result === 0
          ? "it changed nothing: no environment in the credential's scope takes this image with this tag (the log of that delivery says why)"
          : `it scheduled ${duplicate.result} bump${duplicate.result === 1 ? '' : 's'}`
        : 'it was processed';
    case 'active':
      return 'it is being processed now';
    default:
      return `it is ${duplicate.state}, not processed yet`;
  }
}

/** An image job's result of this version: what it scheduled, or why nothing. */
function isScheduled(result: unknown): result is { scheduled: number; nothing?: string } {
  return (
    typeof result === 'object' && result !== null && typeof (result as { scheduled?: unknown }).scheduled === 'number'
  );
}

/** An image job's answer when the registry contradicted the event (src/jobs/shared/verify-image.ts). */
function isRefusal(result: unknown): result is { refused: string } {
  return typeof result === 'object' && result !== null && typeof (result as { refused?: unknown }).refused === 'string';
}

/** The mechanism behind each {@link RegistryAuth} a registry descriptor names (the CI API: `bearer`, or GitHub Actions OIDC). */
async function authenticate(
  req: IncomingMessage,
  source: string,
  auth: RegistryAuth,
  pathToken: string | undefined,
  options: RegistryRouteOptions,
  credentials: IntakeCredentials,
): Promise<Authenticated> {
  if (auth === 'google-oidc') {
    if (!options.verifyGoogleToken)
      throw new HttpError(
        404,
        'Google Artifact Registry intake is disabled; set ESCALATOR_GAR_AUDIENCE and ESCALATOR_GAR_SERVICE_ACCOUNT',
      );
    await options.verifyGoogleToken(req.headers.authorization);
    // Until registry verification exists, the Pub/Sub topic is one operator's: its events may change every installation.
    return { scope: { by: 'gar:ESCALATOR_GAR_SERVICE_ACCOUNT', owners: '*' } };
  }
  if (auth === 'path-token') {
    if (!pathToken)
      throw new HttpError(
        401,
        `${source} cannot send an Authorization header, so its token is in the path; configure the webhook URL as /registry/${source}/<token>`,
      );
    return credentials.authenticate(pathToken, source, true);
  }
  if (pathToken)
    throw new HttpError(
      404,
      `${source} authenticates with the Authorization header; use /registry/${source} without a path token`,
    );
  const header = req.headers.authorization ?? '';
  if (!header)
    throw new HttpError(
      401,
      `missing Authorization header; send Authorization: Bearer <token>${source === 'ci' ? ' (a GitHub Actions id-token, or a scoped token)' : ''}`,
      { 'www-authenticate': 'Bearer' },
    );
  // Harbor, ACR and EventBridge API destinations send whatever header value the operator typed.
  const token = bearerToken(header) ?? header.trim();
  if (source === 'ci' && options.verifyGitHubToken && looksLikeJwt(token)) return options.verifyGitHubToken(token);
  return credentials.authenticate(token, source, false);
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && /^[\w.-]{1,128}$/.test(value) ? value : undefined;
}

function outcomeOf(status: number): IntakeOutcome {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 413:
      return 'too-large';
    case 415:
      return 'unsupported-media';
    case 405:
      return 'method';
    case 404:
      return 'not-found';
    default:
      return 'invalid';
  }
}
