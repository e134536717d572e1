import { SandboxClient } from './client.js';
import type { SandboxContext } from './context.js';
import { installApp } from './repositories.js';
import type { ImageBuild } from './registry.js';

/**
 * The images of the shipped example (`examples/gitops-repo`: `ghcr.io/example/hello` and
 * `ghcr.io/example/world`) and their source repositories in the simulated GitHub, so that a
 * bump or promotion in the sandbox shows what a real one shows: digest, created time, platforms,
 * size, and from the source the commits, merged pull requests and release notes in between.
 *
 * Each source repository is written as a team would: commits, a branch merged through a pull
 * request, a release per version. Each version's image carries the OCI labels CI writes
 * (https://github.com/opencontainers/image-spec/blob/main/annotations.md): the source repository,
 * the commit it was built from and the version.
 */

interface Version {
  version: string;
  /** Pushed to the default branch, one commit each, before the release. */
  commits?: { message: string; files: Record<string, string> }[];
  /** A branch and its pull request, merged before the release. */
  pull?: { branch: string; title: string; body: string; message: string; files: Record<string, string> };
  release: { name: string; body: string };
  created: string;
}

interface SourceRepository {
  name: string;
  platforms: string[];
  initial: Record<string, string>;
  versions: Version[];
}

const SOURCES: SourceRepository[] = [
  {
    name: 'hello',
    platforms: ['linux/amd64', 'linux/arm64'],
    initial: {
      'README.md': '# hello\n\nAnswers "hello" on port 8080.\n',
      'main.go': 'package main\n\n// hello answers "hello".\nfunc main() { serve(":8080", "hello") }\n',
    },
    versions: [
      {
        version: '0.9.2',
        release: { name: 'hello 0.9.2', body: 'First release: answers "hello" on port 8080.' },
        created: '2026-10-20T09:00:00Z',
      },
      {
        version: '1.0.0',
        commits: [
          {
            message: 'Answer /healthz for the readiness probe',
            files: { 'health.go': 'package main\n\n// /healthz answers 200 once the greeting is loaded.\n' },
          },
        ],
        release: { name: 'hello 1.0.0', body: '## Changes\n- `/healthz` answers once the greeting is loaded.' },
        created: '2026-11-03T10:15:00Z',
      },
      {
        version: '1.1.0',
        pull: {
          branch: 'cache-greeting',
          title: 'Cache the greeting between requests',
          body: 'Reads the greeting once instead of on every request.',
          message: 'Cache the greeting between requests',
          files: { 'cache.go': 'package main\n\n// The greeting is read once and kept.\n' },
        },
        commits: [
          {
            message: "Log each request's id",
            files: { 'log.go': 'package main\n\n// Every request is logged with its X-Request-Id.\n' },
          },
        ],
        release: {
          name: 'hello 1.1.0',
          body: "## Changes\n- The greeting is cached between requests.\n- Each request's id is logged.",
        },
        created: '2026-11-24T14:30:00Z',
      },
      {
        version: '1.2.0',
        pull: {
          branch: 'french',
          title: 'Greet in French when asked',
          body: 'Answers "bonjour" to `Accept-Language: fr`.',
          message: 'Greet in French when asked',
          files: { 'i18n.go': 'package main\n\n// "bonjour" for Accept-Language: fr.\n' },
        },
        release: { name: 'hello 1.2.0', body: '## Changes\n- Answers "bonjour" to `Accept-Language: fr`.' },
        created: '2026-12-02T08:45:00Z',
      },
    ],
  },
  {
    name: 'world',
    platforms: ['linux/amd64', 'linux/arm64'],
    initial: {
      'README.md': '# world\n\nAnswers "world" on port 9090.\n',
      'main.go': 'package main\n\n// world answers "world".\nfunc main() { serve(":9090", "world") }\n',
    },
    versions: [
      {
        version: '2.2.1',
        release: { name: 'world 2.2.1', body: '## Fixes\n- Closes idle connections after 60 s.' },
        created: '2026-10-28T16:00:00Z',
      },
      {
        version: '2.3.0',
        pull: {
          branch: 'json',
          title: 'Answer in JSON when asked',
          body: 'Answers `{"word": "world"}` to `Accept: application/json`.',
          message: 'Answer in JSON when asked',
          files: { 'json.go': 'package main\n\n// {"word": "world"} for Accept: application/json.\n' },
        },
        release: { name: 'world 2.3.0', body: '## Changes\n- Answers in JSON to `Accept: application/json`.' },
        created: '2026-11-18T11:20:00Z',
      },
    ],
  },
];

/** The sandbox's example images and the versions they are, by repository (`example/hello`). */
export const EXAMPLE_IMAGE_TAGS: Record<string, string[]> = Object.fromEntries(
  SOURCES.map((source) => [`example/${source.name}`, source.versions.map((v) => v.version)]),
);

/**
 * Creates `owner/hello` and `owner/world` in the simulator (public, as their GitOps repository)
 * with their history, through the control API and the REST API as the developer, then installs
 * the App on them (the same installation as the GitOps repository, so Escalator may show their
 * changes there); returns the image builds whose labels point at them. `webUrl` is the
 * simulator's web root, the host of the `org.opencontainers.image.source` URLs.
 */
export async function seedExampleSources(
  context: SandboxContext,
  options: { webUrl: string; apiUrl: string; login: string; token: string; owner: string },
): Promise<ImageBuild[]> {
  const client = new SandboxClient(options.webUrl, options.token);
  const builds: ImageBuild[] = [];
  for (const source of SOURCES) {
    const fullName = `${options.owner}/${source.name}`;
    await client.createRepo({
      owner: options.owner,
      name: source.name,
      files: source.initial,
      description: `Source of ${source.name}, the image ghcr.io/${options.owner}/${source.name} (seeded by npm run sandbox)`,
      // Installed once its history is written (`installed` below): its past sends the App no webhooks.
      install: false,
    });
    let head = '';
    for (const version of source.versions) {
      if (version.pull) {
        const { branch, title, body, message, files } = version.pull;
        await client.commit(fullName, { branch, files, message, from: 'main' });
        const pull = await client.openPull(fullName, { title, head: branch, base: 'main', body });
        head = (await client.mergePull(fullName, pull.number, { method: 'merge' })).sha;
      }
      for (const commit of version.commits ?? [])
        head = (await client.commit(fullName, { branch: 'main', files: commit.files, message: commit.message })).sha;
      const release = await fetch(`${options.apiUrl}/repos/${fullName}/releases`, {
        method: 'POST',
        headers: {
          authorization: `token ${options.token}`,
          accept: 'application/vnd.github+json',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          tag_name: `v${version.version}`,
          target_commitish: 'main',
          name: version.release.name,
          body: version.release.body,
        }),
      });
      if (release.status !== 201)
        throw new Error(
          `The simulated GitHub refused the release v${version.version} of ${fullName} (${release.status}).`,
        );
      if (!head) {
        const branch = (await (
          await fetch(`${options.apiUrl}/repos/${fullName}/branches/main`, {
            headers: { authorization: `token ${options.token}`, accept: 'application/vnd.github+json' },
          })
        ).json()) as { commit: { sha: string } };
        head = branch.commit.sha;
      }
      builds.push({
        repository: `${options.owner}/${source.name}`,
        tag: version.version,
        platforms: source.platforms,
        created: version.created,
        labels: {
          'org.opencontainers.image.source': `${options.webUrl}/${fullName}`,
          'org.opencontainers.image.revision': head,
          'org.opencontainers.image.version': version.version,
          'org.opencontainers.image.created': version.created,
          'org.opencontainers.image.title': source.name,
        },
        files: { [source.name]: `${source.name} ${version.version}\n` },
      });
    }
  }
  const developer = context.state.user(options.login);
  if (!developer) throw new Error(`The simulator has no user ${options.login}.`);
  for (const source of SOURCES) {
    const repo = context.state.repo(options.owner, source.name);
    if (repo) installApp(context, repo, developer);
  }
  return builds;
}
