import { describe, expect, it } from 'vitest';
import { parseSourceRepository, sourceFacts } from '../../src/planners/image-facts.js';
import {
  formatSize,
  inertText,
  literalBlock,
  notesVisible,
  renderReleaseNotes,
  type RepoVisibility,
  type ImageNotes,
  type SourceCommit,
} from '../../src/planners/release-notes.js';

const BASE = '1'.repeat(40);
const HEAD = '2'.repeat(40);
const REPO = { host: 'github.com', owner: 'example', repo: 'hello' };
const DIGEST = `sha256:${'a'.repeat(64)}`;

function image(overrides: Partial<ImageNotes> = {}): ImageNotes {
  return {
    image: 'ghcr.io/example/hello',
    from: { tag: '1.4.1' },
    to: { tag: '1.4.2', digest: DIGEST },
    facts: {
      repository: 'ghcr.io/example/hello',
      tag: '1.4.2',
      digest: DIGEST,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      created: '2026-11-30T10:00:00Z',
      platforms: ['linux/amd64', 'linux/arm64'],
      size: 12_345_678,
      sizePlatform: 'linux/amd64',
      source: 'https://github.com/example/hello',
      revision: HEAD,
    },
    source: { url: 'https://github.com/example/hello', repository: REPO },
    range: {
      kind: 'read',
      base: BASE,
      head: HEAD,
      commits: [
        { sha: '3'.repeat(40), message: 'Fix the greeting (#12)\n\nLonger text', author: 'octocat', pulls: [12] },
      ],
      totalCommits: 1,
      pulls: [{ number: 12, title: 'Fix the greeting', author: 'octocat' }],
      releases: [{ tag: 'v1.4.2', name: 'Hello 1.4.2', body: '## Fixes\n- the greeting' }],
    },
    ...overrides,
  };
}

/**
 * What GitHub would still interpret in rendered text, outside code spans and fenced blocks:
 * mentions, issue references, HTML other than the folding tags, and links to github.com issues.
 */
function live(markdown: string): string[] {
  const outside = markdown
    .replace(/&#8288;/g, '\u2060')
    .replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '')
    .replace(/(`+)[^`]*?\1/g, '')
    .replace(/\]\(https:\/\/[^)\s]+\)/g, ']');
  const found: string[] = [];
  for (const match of outside.matchAll(
    /@[A-Za-z0-9]|#\d|<(?!\/?(details|summary)>)[^ ]|(?<!redirect\\?\.)github\\?\.com\/[^ ]*\/(issues|pull)\//g,
  ))
    found.push(match[0]);
  return found;
}

describe('renderReleaseNotes', () => {
  it('shows facts, releases, pull requests, commits and the compare link', () => {
    expect(renderReleaseNotes([image()], { budget: 10_000 })).toBe(
      [
        '### What changed',
        '',
        '#### `ghcr.io/example/hello` `1.4.1` → `1.4.2`',
        '',
        '| | |',
        '|---|---|',
        `| Digest | \`${DIGEST}\` |`,
        '| Created | 2026-11-30 10:00 UTC |',
        '| Platforms | `linux/amd64`, `linux/arm64` |',
        '| Size | 12.3 MB (`linux/amd64`) |',
        '| Source | [example/hello](https://github.com/example/hello) |',
        '| Revisions | `1111111` → `2222222` |',
        '',
        '**Releases** (1)',
        '',
        '<details><summary>v1\\.4\\.2: Hello 1\\.4\\.2</summary>',
        '',
        '```text',
        '## Fixes',
        '- the greeting',
        '```',
        '',
        '[Release page](https://github.com/example/hello/releases/tag/v1.4.2)',
        '</details>',
        '',
        '',
        '**Merged pull requests (1)**',
        '',
        '- [#&#8288;12](https://redirect.github.com/example/hello/pull/12) Fix the greeting (`octocat`)',
        '',
        '**Commits (1)**',
        '',
        '- [`3333333`](https://github.com/example/hello/commit/3333333333333333333333333333333333333333) Fix the greeting \\(\\#&#8288;12\\) (`octocat`) [#&#8288;12](https://redirect.github.com/example/hello/pull/12)',
        '',
        `[Compare 1111111...2222222](https://github.com/example/hello/compare/${BASE}...${HEAD})`,
      ].join('\n'),
    );
  });

  describe('when commits, pull requests and releases carry hostile text', () => {
    const hostile = [
      '<script>alert(1)</script> **bold** [x](http://evil.example) ![i](http://evil.example/i.png)',
      '@team please look, cc @octocat and @example/release-managers',
      'Fixes #1 and example/other#2 and GH-3',
      'See https://github.com/example/hello/issues/4 and http://www.github.com/example/hello/pull/5',
      '</details><details open><summary>x</summary> `code` | pipe | --- ===',
      '<!-- comment --> &lt;b&gt; <img src=x onerror=alert(1)>',
    ];
    const notes = image({
      range: {
        kind: 'read',
        base: BASE,
        head: HEAD,
        commits: hostile.map((message, i) => ({ sha: `${i}`.repeat(40), message, author: '@evil<b>' })),
        totalCommits: hostile.length,
        pulls: hostile.map((title, i) => ({ number: i + 1, title, author: 'bot`name' })),
        releases: [
          {
            // git accepts this tag name (git check-ref-format): a tag must not ping a team either.
            tag: '@acme/everyone',
            name: '@team #9 <b>',
            body: '```\n</details>\n@team #7\n````\n<script>x</script>\n[link](https://github.com/a/b/pull/1)',
          },
        ],
      },
    });
    const text = renderReleaseNotes([notes], { budget: 20_000 });

    it('leaves no mention, reference, HTML or issue link live', () => {
      expect(live(text)).toEqual([]);
    });

    it('keeps the release notes in a fence longer than any backtick run in them', () => {
      expect(text).toContain('`````text\n```\n</details>\n@team #7\n````\n<script>x</script>');
      expect(text.replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '').match(/<\/details>/g)?.length).toBe(1);
    });

    it('keeps the words readable', () => {
      expect(text).toContain('\\@&#8288;team please look, cc \\@&#8288;octocat');
      expect(text).toContain('Fixes \\#&#8288;1 and example/other\\#&#8288;2 and GH\\-&#8288;3');
      expect(text).toContain('https://redirect\\.github\\.com/example/hello/issues/4');
    });
  });

  describe('when the range holds 5,000 commits', () => {
    const commits: SourceCommit[] = Array.from({ length: 250 }, (_, i) => ({
      sha: i.toString(16).padStart(40, '0'),
      message: `Change number ${i} with @someone and #${i}\n\nbody`,
      author: `dev${i}`,
      pulls: [i + 1],
    }));
    const notes = image({
      range: {
        kind: 'read',
        base: BASE,
        head: HEAD,
        commits,
        totalCommits: 5000,
        pulls: commits.map((c, i) => ({ number: i + 1, title: `PR ${i}`, author: c.author! })),
        releases: Array.from({ length: 30 }, (_, i) => ({ tag: `v1.${i}.0`, body: 'x'.repeat(10_000) })),
      },
    });

    it('stays within the budget, folds the lists and ends them with the compare link', () => {
      for (const budget of [60_000, 20_000, 5_000]) {
        const text = renderReleaseNotes([notes], { budget });
        expect(text.length).toBeLessThanOrEqual(budget);
        expect(text).toContain(`(https://github.com/example/hello/compare/${BASE}...${HEAD})`);
        expect(text).toMatch(/… and \d+ more: \[Compare 1111111\.\.\.2222222\]/);
        expect(live(text)).toEqual([]);
      }
      expect(renderReleaseNotes([notes], { budget: 60_000 })).toContain('<details><summary>Commits (5000)</summary>');
    });

    it('keeps the facts and the compare link when only they fit', () => {
      const text = renderReleaseNotes([notes], { budget: 1_500 });
      expect(text).toContain('| Digest |');
      expect(text).toContain('**Commits (5000)**: [Compare 1111111...2222222]');
      expect(text.length).toBeLessThanOrEqual(1_500);
    });
  });

  describe('when the source repository cannot be read', () => {
    it('gives the compare link alone and one sentence why', () => {
      const text = renderReleaseNotes(
        [
          image({
            range: {
              kind: 'unavailable',
              base: BASE,
              head: HEAD,
              reason: 'Escalator cannot read example/hello: the App is not installed on it.',
            },
          }),
        ],
        { budget: 5_000 },
      );
      expect(text.split('\n').slice(-1)[0]).toBe(
        `Escalator cannot read example/hello: the App is not installed on it\\. [Compare 1111111...2222222](https://github.com/example/hello/compare/${BASE}...${HEAD})`,
      );
    });
  });

  describe('when two images come from one source range', () => {
    it('shows the changes once', () => {
      const text = renderReleaseNotes([image(), image({ image: 'ghcr.io/example/hello-worker' })], { budget: 10_000 });
      expect(text.match(/\*\*Commits \(1\)\*\*/g)?.length).toBe(1);
      expect(text).toContain('Same source changes as `ghcr.io/example/hello` above.');
    });
  });
});

describe('inertText', () => {
  it('escapes markdown and HTML and breaks mentions and references', () => {
    expect(inertText('@a #1 <b>*x*</b> GH-2')).toBe('\\@&#8288;a \\#&#8288;1 &lt;b&gt;\\*x\\*&lt;/b&gt; GH\\-&#8288;2');
  });
});

describe('inertText with bidirectional controls', () => {
  it('drops them', () => {
    expect(inertText('admin\u202E\u2066 txt.exe')).toBe('admin txt\\.exe');
  });
});

describe('literalBlock', () => {
  it('uses a fence longer than the text holds', () => {
    expect(literalBlock('a ```` b')).toBe('`````text\na ```` b\n`````');
  });
});

describe('formatSize', () => {
  it.each([
    [900, '900 B'],
    [12_345, '12.3 kB'],
    [12_345_678, '12.3 MB'],
    [3_000_000_000, '3.0 GB'],
  ])('%d → %s', (bytes, text) => expect(formatSize(bytes)).toBe(text));
});

describe('sourceFacts', () => {
  it('prefers annotations to labels and drops malformed times', () => {
    expect(
      sourceFacts(
        {
          'org.opencontainers.image.source': 'https://github.com/a/b',
          'org.opencontainers.image.created': 'yesterday',
        },
        { 'org.opencontainers.image.source': 'https://github.com/c/d', 'org.opencontainers.image.revision': 'abc' },
      ),
    ).toEqual({ source: 'https://github.com/a/b', revision: 'abc' });
  });
});

describe('parseSourceRepository', () => {
  it.each([
    ['https://github.com/example/hello', { host: 'github.com', owner: 'example', repo: 'hello' }],
    ['https://github.com/example/hello.git', { host: 'github.com', owner: 'example', repo: 'hello' }],
    ['git+https://github.com/example/hello/tree/main/app', { host: 'github.com', owner: 'example', repo: 'hello' }],
    ['git@github.com:example/hello.git', { host: 'github.com', owner: 'example', repo: 'hello' }],
    ['https://gitlab.com/example/hello', undefined],
    ['https://github.com/example', undefined],
    ['javascript:alert(1)', undefined],
  ])('%s', (source, expected) => expect(parseSourceRepository(source)).toEqual(expected));
});

describe('notesVisible', () => {
  // gitops visibility, source visibility, same owner, shown
  const table: Array<[RepoVisibility, RepoVisibility, boolean, boolean]> = [
    ['public', 'public', true, true],
    ['public', 'public', false, true],
    ['public', 'private', true, false],
    ['public', 'internal', true, false],
    ['internal', 'public', false, true],
    ['internal', 'internal', true, true],
    ['internal', 'internal', false, false],
    ['internal', 'private', true, false],
    ['private', 'public', false, true],
    ['private', 'private', true, true],
    ['private', 'internal', true, true],
    ['private', 'private', false, false],
    ['private', 'internal', false, false],
  ];
  it.each(table)('a %s GitOps repository, a %s source (same owner: %s) → shown: %s', (gitops, source, same, shown) => {
    expect(
      notesVisible({ owner: 'Example', visibility: gitops }, { owner: same ? 'example' : 'acme', visibility: source }),
    ).toBe(shown);
  });
});

describe('renderReleaseNotes of a source it may not show', () => {
  it('names neither the source nor its revisions, and says "private source, not shown"', () => {
    const text = renderReleaseNotes(
      [
        image({
          source: { url: 'https://github.com/example/secret-app', repository: { ...REPO, repo: 'secret-app' } },
          range: { kind: 'unavailable', hidden: true, reason: 'Private source, not shown: not visible here.' },
        }),
      ],
      { budget: 10_000 },
    );
    expect(text).toContain('| Source | private source, not shown |');
    expect(text).not.toContain('secret-app');
    expect(text).not.toContain('Revisions');
    expect(text).not.toContain('compare');
  });

  it("says when the sender's source is not the image's label, which wins", () => {
    const text = renderReleaseNotes(
      [
        image({
          source: { url: 'https://github.com/example/hello', repository: REPO },
          sentSource: 'https://github.com/@someone/elsewhere',
          range: { kind: 'unavailable', reason: 'No range.' },
        }),
      ],
      { budget: 10_000 },
    );
    expect(text).toContain(
      "The sender named `https://github.com/@someone/elsewhere` as the source, but the image's label `org.opencontainers.image.source` names `https://github.com/example/hello`: the label wins, since the image carries it.",
    );
  });
});
