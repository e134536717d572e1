/**
 * `npx tsx bench/notes.ts`: what the "What changed" section costs one bump pull request.
 *
 * 1. a real `docker-registry` (Debian, CNCF Distribution) behind a counting HTTP proxy, images
 *    pushed by `skopeo`: per app, 1.0.0 (the running version) and 1.1.0 (a two-platform index),
 *    both labelled with their source repository and revision
 * 2. in the sandbox GitHub, the source repository: 20 commits between the two revisions, 3 of
 *    them by merged pull requests, 2 releases in the range; and NOTES_REPOS GitOps repositories
 *    (default 6) of one app each, with notes (images in that registry) and as many without (images
 *    on a registry host where nothing listens: the notes end at one refused connection, about
 *    what a bump costs without them)
 * 3. one at a time, `POST /api/v1/images` for 1.1.0 and time until its bump PR is listable; count
 *    the GitHub calls of the bump job and the registry requests while it ran
 * Figures only; it stops by itself. Keys live under a random prefix and are removed at the end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startRegistry } from '../test/support/oci-images.js';
import { freePort } from '../test/support/net.js';
import {
  byJob,
  postImage,
  routeSummary,
  startBenchStack,
  waitForPull,
  waitIdle,
  waitIndexed,
  type BenchStack,
  type GitHubCall,
} from './support/stack.js';
import { banner, loadavg, ms, summarize } from './support/stats.js';

const REPOS = Number(process.env.NOTES_REPOS ?? 6);
const COMMITS = 20;
const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';

interface Sample {
  ms: number;
  bumpCalls: GitHubCall[];
  registryCalls: number;
  body: number;
}

/** A proxy in front of the registry that counts the requests Escalator makes to it. */
async function countingProxy(target: string): Promise<{ host: string; count: () => number; close: () => void }> {
  let requests = 0;
  const [hostname, port] = target.split(':');
  const server = createServer((req, res) => {
    requests++;
    const upstream = httpRequest(
      { hostname, port: Number(port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => requests,
    close: () => server.close(),
  };
}

banner('bench/notes.ts — the cost of release notes in one bump PR (sandbox GitHub, docker-registry, real Redis)');
const registry = await startRegistry();
const proxy = await countingProxy(registry.host);
const nowhere = `127.0.0.1:${await freePort()}`;
// One installation holds every repository here; its write budget (72 a minute, GitHub's limit) would
// make later samples wait for the minute to turn, which measures the budget, not the notes.
// A registry on the loopback is read only when the credentials name it; this one takes any.
const authFile = join(mkdtempSync(join(tmpdir(), 'escalator-bench-notes-')), 'config.json');
writeFileSync(
  authFile,
  JSON.stringify({ auths: { [proxy.host]: { username: 'bench', password: 'unused', owners: ['*'] } } }),
);
const stack: BenchStack = await startBenchStack({
  ESCALATOR_REGISTRY_AUTH_FILE: authFile,
  ESCALATOR_DEBOUNCE_MS: '0',
  ESCALATOR_GITHUB_WRITES_PER_MINUTE: '5000',
  ESCALATOR_GITHUB_WRITES_PER_HOUR: '50000',
});
try {
  const web = new URL(stack.sim.apiUrl).host;
  const source = `http://${web}/developer/hello`;
  await stack.client.createRepo({ name: 'hello', files: { 'README.md': 'hello\n' } });
  const repo = { owner: 'developer', repo: 'hello' };
  const base = (await stack.user.rest.repos.getBranch({ ...repo, branch: 'main' })).data.commit.sha;
  let head = base;
  for (let i = 0; i < COMMITS; i++) {
    if (i % 7 === 3) {
      await stack.client.commit('developer/hello', {
        branch: `fix-${i}`,
        files: { [`f${i}`]: `${i}\n` },
        message: `Fix ${i}`,
        from: 'main',
      });
      const pull = await stack.user.rest.pulls.create({ ...repo, title: `Fix ${i}`, head: `fix-${i}`, base: 'main' });
      head = (await stack.user.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: 'squash' }))
        .data.sha;
    } else
      head = (
        await stack.client.commit('developer/hello', {
          branch: 'main',
          files: { [`f${i}`]: `${i}\n` },
          message: `Change ${i}`,
        })
      ).sha;
    if (i === 9 || i === COMMITS - 1)
      await stack.user.rest.repos.createRelease({ ...repo, tag_name: `v1.${i}.0`, body: `Release ${i}\n- notes` });
  }

  for (let i = 0; i < REPOS; i++) {
    await registry.push(`team/app-${i}`, '1.0.0', {
      labels: { 'org.opencontainers.image.source': source, 'org.opencontainers.image.revision': base },
      seed: i * 2,
    });
    await registry.push(`team/app-${i}`, '1.1.0', {
      platforms: ['linux/amd64', 'linux/arm64'],
      labels: { 'org.opencontainers.image.source': source, 'org.opencontainers.image.revision': head },
      seed: i * 2 + 1,
    });
    for (const [kind, host] of [
      ['notes', proxy.host],
      ['plain', nowhere],
    ] as const)
      await stack.client.createRepo({
        name: `${kind}-${i}`,
        files: {
          '.github/escalator.yml': config,
          [`apps/app-${i}/overlays/dev/kustomization.yaml`]: `images:\n  - name: ${host}/team/app-${i}\n    newTag: 1.0.0\n`,
        },
      });
  }
  for (let i = 0; i < REPOS; i++) {
    await waitIndexed(stack, 'developer', `notes-${i}`, 1);
    await waitIndexed(stack, 'developer', `plain-${i}`, 1);
  }
  await waitIdle(stack);

  const run = async (kind: 'notes' | 'plain', i: number): Promise<Sample> => {
    const host = kind === 'notes' ? proxy.host : nowhere;
    const pending = waitForPull(stack, {
      owner: 'developer',
      repo: `${kind}-${i}`,
      branch: `escalator/dev/app-${i}`,
      ready: (pull) => pull.labels.length >= 2 && pull.title === `Bump app-${i} to 1.1.0 in dev`,
    });
    const registryBefore = proxy.count();
    const from = Date.now();
    await postImage(stack, `${host}/team/app-${i}:1.1.0`);
    const { pull, at } = await pending;
    await waitIdle(stack);
    const calls = stack.calls.filter((call) => call.startedAt >= from);
    return {
      ms: at - from,
      bumpCalls: byJob(calls).get('bump') ?? [],
      registryCalls: proxy.count() - registryBefore,
      body: pull.body?.length ?? 0,
    };
  };
  const load = loadavg();
  const samples = { notes: [] as Sample[], plain: [] as Sample[] };
  // Alternate, so machine load falls on both alike.
  for (let i = 0; i < REPOS; i++) {
    samples.plain.push(await run('plain', i));
    samples.notes.push(await run('notes', i));
  }
  const p50 = (values: number[]) => summarize(values).p50;
  const line = (label: string, list: Sample[]) =>
    `  ${label.padEnd(34)} n=${list.length}  event → PR p50 ${ms(p50(list.map((s) => s.ms))).padStart(8)}  max ${ms(Math.max(...list.map((s) => s.ms))).padStart(8)}   GitHub calls of the bump job p50 ${p50(list.map((s) => s.bumpCalls.length))}   registry requests p50 ${p50(list.map((s) => s.registryCalls))}   body ${p50(list.map((s) => s.body))} chars`;
  console.log(`load ${load} → ${loadavg()}`);
  console.log(line('with notes (20 commits, 3 PRs, 2 releases)', samples.notes));
  console.log(line('registry unreachable (≈ without notes)', samples.plain));
  const extraMs = p50(samples.notes.map((s) => s.ms)) - p50(samples.plain.map((s) => s.ms));
  const extraCalls =
    p50(samples.notes.map((s) => s.bumpCalls.length)) - p50(samples.plain.map((s) => s.bumpCalls.length));
  console.log(
    `  notes add: p50 ${ms(extraMs)} of wall time, ${extraCalls} GitHub calls, ${p50(samples.notes.map((s) => s.registryCalls))} registry requests per bump PR`,
  );
  console.log('  GitHub calls of one bump job with notes:');
  for (const route of routeSummary(samples.notes[0]!.bumpCalls)) console.log(`    ${route}`);
} finally {
  await stack.close();
  proxy.close();
  registry.close();
}
