import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/index.js';
import { compareShapes, kindOf, OpenApiDescriptions } from '../testing/shape.js';

/**
 * Replays every api.github.com scenario that `@octokit/fixtures` recorded against real GitHub
 * (`scenarios/api.github.com/<name>/normalized-fixture.json`, set up as each scenario's
 * `record.js` did) through the simulator, and holds each answer to the recording: status, body
 * shape (`testing/shape.ts`) and the headers clients act on. A scenario on a route the simulator
 * does not serve must be listed in NOT_SERVED with the routes it lacks, so the list only shrinks.
 */

interface Recorded {
  scope: string;
  method: string;
  path: string;
  body: unknown;
  status: number;
  response: unknown;
  reqheaders: Record<string, string | number>;
  responseIsBinary: boolean;
  headers: Record<string, string | number>;
}

const require = createRequire(import.meta.url);
const SCENARIOS_DIR = join(dirname(require.resolve('@octokit/fixtures/package.json')), 'scenarios', 'api.github.com');
const SCENARIOS = readdirSync(SCENARIOS_DIR).sort();
const load = (name: string) =>
  JSON.parse(readFileSync(join(SCENARIOS_DIR, name, 'normalized-fixture.json'), 'utf8')) as Recorded[];

/** Scenarios on routes the simulator does not serve (yet), and why. Only ever shrinks. */
const NOT_SERVED: Record<string, string> = {
  'add-and-remove-repository-collaborator': 'collaborator invitations: Escalator never invites people',
  'get-organization': 'organizations: Escalator never reads them',
  'mark-notifications-as-read': 'notifications: a person’s inbox, not an App’s',
  markdown: 'markdown rendering: Escalator renders its own comments',
  'project-cards': 'classic projects: retired by GitHub',
  'release-assets': 'releases and uploads.github.com: Escalator never publishes releases',
  'release-assets-conflict': 'releases and uploads.github.com: Escalator never publishes releases',
  'search-issues': 'search: Escalator finds its issues by label',
};

/**
 * Scenarios on routes the simulator serves whose answers still differ from the recording; each
 * still has to differ (so the list only shrinks), and says why and whose work it is.
 */
const DIFFERS: Record<string, string> = {
  'branch-protection':
    'protection with required reviews and push restrictions is refused with 422 (src/routes/gates.ts, merge-gates work)',
};

/** What each scenario's `record.js` set up before its recorded requests (those it marked ignored). */
const SETUP: Record<string, (harness: Harness) => Promise<Map<string, string>>> = {
  'get-content': async (harness) => helloWorld(harness),
  'get-repository': async (harness) => helloWorld(harness),
  'get-archive': async (harness) => emptyRepo(harness, 'get-archive', { 'README.md': '# get-archive' }),
  'branch-protection': async (harness) => emptyRepo(harness, 'branch-protection', { 'README.md': '# branch' }),
  'create-status': async (harness) => {
    await emptyRepo(harness, 'create-status', { 'README.md': '# create-status' });
    const head = await harness.userOctokit().rest.git.getRef({ owner: ORG, repo: 'create-status', ref: 'heads/main' });
    return new Map([['0000000000000000000000000000000000000001', head.data.object.sha]]);
  },
  'create-file': async (harness) => emptyRepo(harness, 'create-file'),
  errors: async (harness) => emptyRepo(harness, 'errors'),
  labels: async (harness) => emptyRepo(harness, 'labels'),
  'rename-repository': async (harness) => emptyRepo(harness, 'rename-repository'),
  'add-labels-to-issue': async (harness) => emptyRepo(harness, 'add-labels-to-issue'),
  'git-refs': async (harness) => {
    // Two commits: `1.md` then `2.md`; the recording names the first one's SHA 0…02.
    await emptyRepo(harness, 'git-refs', { '1.md': '# git-refs\ncreated with initial commit' });
    const first = await harness.userOctokit().rest.git.getRef({ owner: ORG, repo: 'git-refs', ref: 'heads/main' });
    await harness.client.commit(`${ORG}/git-refs`, {
      branch: 'main',
      message: '2nd commit',
      files: { '2.md': '# git-refs\ncreated with 2nd commit' },
    });
    return new Map([['0000000000000000000000000000000000000002', first.data.object.sha]]);
  },
  'lock-issue': async (harness) => {
    await emptyRepo(harness, 'lock-issue');
    await harness.userOctokit().rest.issues.create({ owner: ORG, repo: 'lock-issue', title: 'Issue without a label' });
    return new Map();
  },
  'paginate-issues': async (harness) => {
    await emptyRepo(harness, 'paginate-issues');
    for (let i = 1; i <= 13; i += 1)
      await harness.userOctokit().rest.issues.create({ owner: ORG, repo: 'paginate-issues', title: `Test issue ${i}` });
    return new Map();
  },
};

const ORG = 'octokit-fixture-org';

async function emptyRepo(harness: Harness, name: string, files: Record<string, string> = {}) {
  await harness.client.createRepo({ owner: ORG, name, files });
  return new Map<string, string>();
}

async function helloWorld(harness: Harness) {
  await harness.client.createRepo({
    owner: ORG,
    name: 'hello-world',
    files: { 'README.md': '# hello-world' },
    defaultBranch: 'master',
    topics: ['fixtures', 'hello', 'hello-world'],
  });
  return new Map<string, string>();
}

const descriptions = new OpenApiDescriptions();
const results = new Map<string, string>();

afterAll(() => {
  const matched = [...results.values()].filter((result) => result === 'matches').length;
  const lines = [...results].map(([name, result]) => `  ${name}: ${result}`);
  process.stdout.write(
    `@octokit/fixtures replay: ${matched} of ${SCENARIOS.length} scenarios match\n${lines.join('\n')}\n`,
  );
});

describe('@octokit/fixtures replay', () => {
  it.each(SCENARIOS)('%s', async (name) => {
    const recorded = load(name);
    const harness = await startHarness({ user: 'octokit-fixture-user-a' });
    try {
      const missing = [
        ...new Set(
          recorded
            .filter((exchange) => exchange.scope === 'https://api.github.com:443')
            .map((exchange) => `${exchange.method.toUpperCase()} ${exchange.path.split('?')[0] ?? ''}`)
            .filter((route) => {
              const [method = '', path = ''] = route.split(' ');
              return !harness.sim.serves(method, path);
            }),
        ),
      ];
      if (missing.length > 0) {
        results.set(name, `not served: ${missing.join(', ')}${name in NOT_SERVED ? ` (${NOT_SERVED[name]})` : ''}`);
        expect(NOT_SERVED, `${name} needs routes the simulator lacks: ${missing.join(', ')}`).toHaveProperty([name]);
        return;
      }
      expect(NOT_SERVED, `${name} is served now: remove it from NOT_SERVED`).not.toHaveProperty([name]);
      const learned = (await SETUP[name]?.(harness)) ?? new Map<string, string>();
      const differences = await replay(harness, recorded, learned);
      if (name in DIFFERS) {
        results.set(name, `differs (${DIFFERS[name]}): ${differences.slice(0, 2).join('; ')}`);
        expect(differences, `${name} matches now: remove it from DIFFERS`).not.toEqual([]);
        return;
      }
      results.set(name, differences.length ? `differs: ${differences.slice(0, 4).join('; ')}` : 'matches');
      expect(differences).toEqual([]);
      await harness.sim.context.webhooks.idle();
      expectGitHubShaped(harness);
    } finally {
      await harness.close();
    }
  });
});

/** Replays the recorded requests in order and lists every way the answers differ. */
async function replay(harness: Harness, recorded: Recorded[], learned: Map<string, string>): Promise<string[]> {
  const differences: string[] = [];
  const paths = new Map<string, string>();
  let lastLocation: string | undefined;
  for (const [index, exchange] of recorded.entries()) {
    const where = `#${index + 1} ${exchange.method.toUpperCase()} ${exchange.path}`;
    let url: string;
    if (exchange.scope !== 'https://api.github.com:443') {
      // codeload.github.com and friends: the simulator's answer says where to go instead.
      if (!lastLocation) {
        differences.push(`${where}: the previous answer had no location to follow`);
        continue;
      }
      url = lastLocation;
    } else {
      url = harness.sim.apiUrl + (paths.get(exchange.path) ?? translatePath(exchange.path, learned));
    }
    const headers: Record<string, string> = { authorization: `token ${harness.sim.user.token}` };
    if (exchange.reqheaders.accept) headers.accept = String(exchange.reqheaders.accept);
    const hasBody = exchange.body !== '' && exchange.body !== undefined;
    if (hasBody) headers['content-type'] = 'application/json; charset=utf-8';
    const response = await fetch(url, {
      method: exchange.method.toUpperCase(),
      headers,
      redirect: 'manual',
      ...(hasBody ? { body: JSON.stringify(translateBody(exchange.body, learned)) } : {}),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const body = exchange.responseIsBinary ? undefined : /json/.test(contentType) && text ? JSON.parse(text) : text;
    if (response.status !== exchange.status) {
      differences.push(`${where}: status ${response.status}, GitHub ${exchange.status} (${text.slice(0, 200)})`);
      continue;
    }
    const actualHeaders = Object.fromEntries(response.headers.entries());
    differences.push(...compareHeaders(exchange.headers, actualHeaders, harness).map((d) => `${where}: ${d}`));
    if (!exchange.responseIsBinary) {
      const described = descriptions.documents(exchange.method, exchange.path.split('?')[0] ?? '', exchange.status);
      // Error bodies carry `status` since after these recordings; GitHub's basic-error documents it.
      const documented = (at: string[], key: string) =>
        described(at, key) || (exchange.status >= 400 && at.length === 0 && key === 'status');
      const found = compareShapes(exchange.response, body, documented, (a, b, key) => {
        if ((key === 'id' || key === 'number' || key.endsWith('_id')) && typeof a === 'number' && typeof b === 'number')
          learned.set(String(a), String(b));
        if (kindOf(a) === 'sha' && kindOf(b) === 'sha') learned.set(a as string, b as string);
      });
      differences.push(...found.map((d) => `${where} body ${d}`));
    }
    // Where the answer points (Location, Link): the next recorded request follows it.
    const location = actualHeaders.location;
    lastLocation = location;
    const recordedLocation = exchange.headers.location;
    if (location && typeof recordedLocation === 'string') paths.set(apiPath(recordedLocation), apiPath(location));
    const links = parseLinks(actualHeaders.link);
    for (const [rel, target] of parseLinks(String(exchange.headers.link ?? ''))) {
      const ours = links.get(rel);
      if (ours) paths.set(apiPath(target), apiPath(ours));
    }
  }
  return differences;
}

/** The headers a client acts on, as the recording has them. */
function compareHeaders(
  recorded: Record<string, string | number>,
  actual: Record<string, string>,
  harness: Harness,
): string[] {
  const differences: string[] = [];
  const presence = (name: string) => {
    if (name in recorded !== name in actual)
      differences.push(`header ${name} ${name in recorded ? 'missing' : 'present where GitHub sends none'}`);
  };
  for (const name of ['etag', 'last-modified', 'location', 'cache-control', 'content-type', 'link']) presence(name);
  if (typeof recorded.location === 'string' && actual.location) {
    const a = normalizePath(apiPath(recorded.location));
    const b = normalizePath(apiPath(actual.location, harness.sim.url));
    if (a !== b) differences.push(`location ${b}, GitHub ${a}`);
  }
  if (recorded['cache-control'] !== undefined && actual['cache-control'] !== undefined) {
    if (recorded['cache-control'] !== actual['cache-control'])
      differences.push(`cache-control "${actual['cache-control']}", GitHub "${recorded['cache-control']}"`);
  }
  const mediaType = (value: unknown) =>
    String(value ?? '')
      .split(';')[0]
      ?.trim();
  if (mediaType(recorded['content-type']) !== mediaType(actual['content-type']))
    differences.push(
      `content-type ${mediaType(actual['content-type'])}, GitHub ${mediaType(recorded['content-type'])}`,
    );
  if (typeof recorded.link === 'string') {
    const rels = (value: string | undefined) => [...parseLinks(value).keys()].sort().join(',');
    if (rels(recorded.link) !== rels(actual.link))
      differences.push(`link rels ${rels(actual.link)}, GitHub ${rels(recorded.link)}`);
  }
  for (const name of Object.keys(recorded)) {
    if ((name.startsWith('x-ratelimit-') || name === 'retry-after') && !(name in actual))
      differences.push(`header ${name} missing`);
  }
  return differences;
}

/** A recorded or simulator URL as an API path with query: no origin, no `/api/v3`. */
function apiPath(url: string, origin?: string): string {
  const parsed = new URL(url, origin ?? 'https://api.github.com');
  let path = parsed.pathname.replace(/^\/api\/v3(?=\/|$)/, '') || '/';
  if (parsed.host === 'codeload.github.com') path = `/_codeload${path}`;
  return path + parsed.search;
}

/** Ids and SHAs differ between servers; compare the paths around them. */
function normalizePath(path: string): string {
  return (
    path
      .split('/')
      // A SHA first: a normalized recording's SHA (`000…001`) is all digits.
      .map((segment) => (/^[0-9a-f]{40}$/.test(segment) ? '{sha}' : /^\d+$/.test(segment) ? '{id}' : segment))
      .join('/')
  );
}

function translatePath(path: string, learned: Map<string, string>): string {
  const [pathname = '', query] = path.split('?');
  const translated = pathname
    .split('/')
    .map((segment) => learned.get(segment) ?? segment)
    .join('/');
  return query === undefined ? translated : `${translated}?${query}`;
}

function translateBody(body: unknown, learned: Map<string, string>): unknown {
  if (typeof body === 'string') return learned.get(body) ?? body;
  if (Array.isArray(body)) return body.map((item) => translateBody(item, learned));
  if (body && typeof body === 'object')
    return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, translateBody(value, learned)]));
  return body;
}

/** `Link: <url>; rel="next", …` as rel → url. */
function parseLinks(header: string | undefined): Map<string, string> {
  const links = new Map<string, string>();
  for (const part of (header ?? '').split(',')) {
    const match = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part);
    if (match?.[1] && match[2]) links.set(match[2], match[1]);
  }
  return links;
}
