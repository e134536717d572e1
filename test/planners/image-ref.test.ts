import { describe, expect, it } from 'vitest';
import {
  familiarName,
  formatImageRef,
  isDigest,
  isValidTag,
  normalizedName,
  parseImageRef,
  sameRepository,
  splitReference,
} from '../../src/planners/image-ref.js';

const SHA256 = `sha256:${'f'.repeat(64)}`;
const SHA512 = `sha512:${'f'.repeat(128)}`;

interface Row {
  input: string;
  domain: string;
  path: string;
  tag?: string;
  digest?: string;
}

// Valid references. Rows marked "ref" come from distribution/reference's reference_test.go
// (TestReferenceParse) and normalize_test.go, read with ParseNormalizedNamed semantics.
const valid: Row[] = [
  { input: 'nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'nginx:1.25', domain: 'docker.io', path: 'library/nginx', tag: '1.25' },
  { input: 'docker.io/nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'docker.io/library/nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'index.docker.io/library/nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'index.docker.io/nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'library/nginx', domain: 'docker.io', path: 'library/nginx' },
  { input: 'bitnami/redis:7.2', domain: 'docker.io', path: 'bitnami/redis', tag: '7.2' },
  { input: 'docker.io/library/foo/bar', domain: 'docker.io', path: 'library/foo/bar' },
  { input: 'store/foo/bar', domain: 'docker.io', path: 'store/foo/bar' },
  { input: 'ghcr.io/example/hello:1.2.3', domain: 'ghcr.io', path: 'example/hello', tag: '1.2.3' },
  { input: `ghcr.io/example/hello@${SHA256}`, domain: 'ghcr.io', path: 'example/hello', digest: SHA256 },
  {
    input: `ghcr.io/example/hello:1.2.3@${SHA256}`,
    domain: 'ghcr.io',
    path: 'example/hello',
    tag: '1.2.3',
    digest: SHA256,
  },
  { input: 'localhost/app', domain: 'localhost', path: 'app' },
  { input: 'localhost:5000/a', domain: 'localhost:5000', path: 'a' },
  { input: 'localhost:5000/a:5000', domain: 'localhost:5000', path: 'a', tag: '5000' },
  { input: 'localhost', domain: 'docker.io', path: 'library/localhost' },
  { input: 'localhost:5000', domain: 'docker.io', path: 'library/localhost', tag: '5000' },
  // ref: test_com is a path component (no '.' or ':')
  { input: 'test_com', domain: 'docker.io', path: 'library/test_com' },
  { input: 'test_com/foo', domain: 'docker.io', path: 'test_com/foo' },
  // ref: without a '/', "test.com:tag" is a Docker Hub name with a tag
  { input: 'test.com:tag', domain: 'docker.io', path: 'library/test.com', tag: 'tag' },
  { input: 'test.com:5000', domain: 'docker.io', path: 'library/test.com', tag: '5000' },
  { input: 'test.com/repo:tag', domain: 'test.com', path: 'repo', tag: 'tag' },
  { input: 'test:5000/repo', domain: 'test:5000', path: 'repo' },
  { input: 'test:5000/repo:tag', domain: 'test:5000', path: 'repo', tag: 'tag' },
  { input: `test:5000/repo@${SHA256}`, domain: 'test:5000', path: 'repo', digest: SHA256 },
  { input: `test:5000/repo:tag@${SHA256}`, domain: 'test:5000', path: 'repo', tag: 'tag', digest: SHA256 },
  { input: 'test-com:8080/foo', domain: 'test-com:8080', path: 'foo' },
  { input: 'lowercase:Uppercase', domain: 'docker.io', path: 'library/lowercase', tag: 'Uppercase' },
  { input: 'sub-dom1.foo.com/bar/baz/quux', domain: 'sub-dom1.foo.com', path: 'bar/baz/quux' },
  {
    input: 'sub-dom1.foo.com/bar/baz/quux:some-long-tag',
    domain: 'sub-dom1.foo.com',
    path: 'bar/baz/quux',
    tag: 'some-long-tag',
  },
  {
    input: 'b.gcr.io/test.example.com/my-app:test.example.com',
    domain: 'b.gcr.io',
    path: 'test.example.com/my-app',
    tag: 'test.example.com',
  },
  { input: 'xn--n3h.com/myimage:xn--n3h.com', domain: 'xn--n3h.com', path: 'myimage', tag: 'xn--n3h.com' },
  {
    input: `xn--7o8h.com/myimage:xn--7o8h.com@${SHA512}`,
    domain: 'xn--7o8h.com',
    path: 'myimage',
    tag: 'xn--7o8h.com',
    digest: SHA512,
  },
  { input: 'xn--n3h.com:18080/foo', domain: 'xn--n3h.com:18080', path: 'foo' },
  { input: 'foo_bar.com:8080', domain: 'docker.io', path: 'library/foo_bar.com', tag: '8080' },
  { input: 'foo/foo_bar.com:8080', domain: 'docker.io', path: 'foo/foo_bar.com', tag: '8080' },
  { input: '192.168.1.1', domain: 'docker.io', path: 'library/192.168.1.1' },
  { input: '192.168.1.1:tag', domain: 'docker.io', path: 'library/192.168.1.1', tag: 'tag' },
  { input: '192.168.1.1/repo', domain: '192.168.1.1', path: 'repo' },
  { input: '192.168.1.1:5000/repo', domain: '192.168.1.1:5000', path: 'repo' },
  { input: '192.168.1.1:5000/repo:5050', domain: '192.168.1.1:5000', path: 'repo', tag: '5050' },
  { input: '127.0.0.1:5000/docker/docker', domain: '127.0.0.1:5000', path: 'docker/docker' },
  { input: '[2001:db8::1]/repo', domain: '[2001:db8::1]', path: 'repo' },
  { input: '[2001:db8:1:2:3:4:5:6]/repo:tag', domain: '[2001:db8:1:2:3:4:5:6]', path: 'repo', tag: 'tag' },
  { input: '[2001:db8::1]:5000/repo', domain: '[2001:db8::1]:5000', path: 'repo' },
  {
    input: `[2001:db8::1]:5000/repo:tag@${SHA256}`,
    domain: '[2001:db8::1]:5000',
    path: 'repo',
    tag: 'tag',
    digest: SHA256,
  },
  { input: '[::1]:5000/repo', domain: '[::1]:5000', path: 'repo' },
  { input: '[fc00::1]:5000/docker/docker', domain: '[fc00::1]:5000', path: 'docker/docker' },
  // ref: an uppercase first component can only be a domain
  { input: 'Docker/docker', domain: 'Docker', path: 'docker' },
  { input: 'FOO/bar', domain: 'FOO', path: 'bar' },
  // ref: name component separators
  { input: 'docker-rules/docker', domain: 'docker.io', path: 'docker-rules/docker' },
  { input: 'docker---rules/docker', domain: 'docker.io', path: 'docker---rules/docker' },
  { input: 'dock__er/docker', domain: 'docker.io', path: 'dock__er/docker' },
  { input: 'd/docker', domain: 'docker.io', path: 'd/docker' },
  { input: 'jess/t', domain: 'docker.io', path: 'jess/t' },
  {
    input: 'thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev',
    domain: 'docker.io',
    path: 'library/thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev',
  },
  // ref: a 64-hex name is fine when a registry makes it unambiguous
  {
    input: `docker.io/${'1a3f5e7d9c1b3a5f'.repeat(4)}`,
    domain: 'docker.io',
    path: `library/${'1a3f5e7d9c1b3a5f'.repeat(4)}`,
  },
  {
    input: `${'a/'.repeat(127)}a:tag-puts-this-over-max`,
    domain: 'docker.io',
    path: `${'a/'.repeat(127)}a`,
    tag: 'tag-puts-this-over-max',
  },
  {
    input: 'busybox:latest@sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa',
    domain: 'docker.io',
    path: 'library/busybox',
    tag: 'latest',
    digest: 'sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa',
  },
  {
    input: `app@blake3:${'0'.repeat(64)}`,
    domain: 'docker.io',
    path: 'library/app',
    digest: `blake3:${'0'.repeat(64)}`,
  },
  {
    input: 'app@sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564',
    domain: 'docker.io',
    path: 'library/app',
    digest: 'sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564',
  },
  { input: `app:${'t'.repeat(128)}`, domain: 'docker.io', path: 'library/app', tag: 't'.repeat(128) },
  { input: 'app:_private', domain: 'docker.io', path: 'library/app', tag: '_private' },
];

const invalid: Array<{ input: string; reason: RegExp }> = [
  { input: '', reason: /empty/ },
  { input: ':justtag', reason: /not a valid image reference/ },
  { input: `@${SHA256}`, reason: /not a valid image reference/ },
  { input: 'repo@sha256:ffffffffffffffffffffffffffffffffff', reason: /not a valid digest/ },
  { input: `repo@SHA256:${'f'.repeat(64)}`, reason: /not a valid digest/ },
  { input: `repo@sha256:${'F'.repeat(64)}`, reason: /not a valid digest/ },
  { input: `repo@sha512:${'f'.repeat(64)}`, reason: /not a valid digest/ },
  { input: 'Uppercase:tag', reason: /lowercase/ },
  { input: 'test:5000/Uppercase/lowercase:tag', reason: /lowercase/ },
  { input: 'docker/Docker', reason: /lowercase/ },
  { input: 'docker.io/docker/Docker', reason: /lowercase/ },
  { input: `${'a/'.repeat(128)}a:tag`, reason: /longer than 255/ },
  { input: 'aa/asdf$$^/aa', reason: /not a valid image reference/ },
  { input: '[2001:db8::1]', reason: /not a valid image reference/ },
  { input: '[2001:db8::1]:5000', reason: /not a valid image reference/ },
  { input: '[fe80::1%eth0]:5000/repo', reason: /invalid registry/ },
  { input: '[fe80::1%@invalidzone]:5000/repo', reason: /invalid registry|not a valid/ },
  { input: 'https://github.com/docker/docker', reason: /invalid registry|not a valid/ },
  { input: '-docker', reason: /not a valid image reference/ },
  { input: '-docker/docker', reason: /not a valid image reference/ },
  { input: '-docker.io/docker/docker', reason: /invalid registry/ },
  { input: 'docker///docker', reason: /not a valid image reference/ },
  { input: 'docker.io/docker///docker', reason: /not a valid image reference/ },
  { input: 'fc00::1:5000/debian', reason: /invalid registry/ },
  { input: 'docker-/docker', reason: /not a valid image reference/ },
  { input: '____/____', reason: /not a valid image reference/ },
  { input: '_docker/_docker', reason: /not a valid image reference/ },
  { input: 'dock..er/docker', reason: /invalid registry/ },
  { input: 'dock..er/docker', reason: /invalid registry/ },
  { input: 'docker/', reason: /not a valid image reference/ },
  { input: '1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a', reason: /hexadecimal/ },
  { input: 'app:-bad', reason: /not a valid tag/ },
  { input: 'app:.bad', reason: /not a valid tag/ },
  { input: `app:${'t'.repeat(129)}`, reason: /not a valid tag/ },
  { input: 'app:tag with space', reason: /not a valid tag/ },
  { input: 'app:', reason: /not a valid tag/ },
  { input: 'app@', reason: /not a valid digest/ },
  { input: 'app@sha256:', reason: /not a valid digest/ },
  { input: 'app@:abc', reason: /not a valid digest/ },
  { input: 'foo/bar:baz/qux', reason: /not a valid image reference/ },
];

describe('parseImageRef', () => {
  it.each(valid)('parses $input', ({ input, ...expected }) => {
    const result = parseImageRef(input);
    expect(result).toEqual({ ok: true, ref: expected });
  });

  it.each(invalid)('rejects "$input"', ({ input, reason }) => {
    const result = parseImageRef(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});

describe('normalizedName and familiarName', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx', 'nginx'],
    ['docker.io/library/ubuntu-12.04-base', 'docker.io/library/ubuntu-12.04-base', 'ubuntu-12.04-base'],
    ['fooo/bar', 'docker.io/fooo/bar', 'fooo/bar'],
    ['other/library', 'docker.io/other/library', 'other/library'],
    ['library/foo/bar', 'docker.io/library/foo/bar', 'library/foo/bar'],
    ['127.0.0.1:8000/private/moonbase', '127.0.0.1:8000/private/moonbase', '127.0.0.1:8000/private/moonbase'],
    ['example.com:8000/privatebasee', 'example.com:8000/privatebasee', 'example.com:8000/privatebasee'],
    ['Foo/bar', 'Foo/bar', 'Foo/bar'],
  ])('%s is %s (familiar: %s)', (input, full, familiar) => {
    const result = parseImageRef(input);
    if (!result.ok) throw new Error(result.reason);
    expect(normalizedName(result.ref)).toBe(full);
    expect(familiarName(result.ref)).toBe(familiar);
  });
});

describe('sameRepository', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx', true],
    ['nginx:1.25', `docker.io/library/nginx@${SHA256}`, true],
    ['index.docker.io/library/nginx', 'nginx', true],
    ['docker.io/nginx', 'library/nginx', true],
    ['bitnami/redis', 'docker.io/bitnami/redis', true],
    ['bitnami/redis', 'docker.io/library/redis', false],
    ['ghcr.io/example/hello', 'ghcr.io/example/hello:1.2.3', true],
    ['ghcr.io/example/hello', 'ghcr.io/example/hello-web', false],
    ['ghcr.io/example/hello', 'docker.io/example/hello', false],
    ['localhost:5000/a', 'localhost:5000/a:1', true],
    ['localhost:5000/a', 'localhost/a', false],
    ['GHCR.io/example/hello', 'ghcr.io/example/hello', false],
    ['Nginx', 'nginx', false],
    ['', '', false],
    ['-bad', '-bad', false],
  ])('%s vs %s → %s', (a, b, expected) => {
    expect(sameRepository(a, b)).toBe(expected);
    expect(sameRepository(b, a)).toBe(expected);
  });
});

describe('isValidTag', () => {
  it.each([
    ['1.2.3', true],
    ['v1', true],
    ['latest', true],
    ['_x', true],
    ['A-Z_a.z-0', true],
    ['t'.repeat(128), true],
    ['t'.repeat(129), false],
    ['', false],
    ['-x', false],
    ['.x', false],
    ['a b', false],
    ['a:b', false],
    ['a@b', false],
    ['a/b', false],
    ['ü', false],
  ])('%s → %s', (tag, expected) => {
    expect(isValidTag(tag)).toBe(expected);
  });
});

describe('isDigest', () => {
  it.each([
    [SHA256, true],
    [SHA512, true],
    [`sha256:${'a'.repeat(63)}`, false],
    [`sha256:${'a'.repeat(65)}`, false],
    [`sha256:${'g'.repeat(64)}`, false],
    [`sha512:${'a'.repeat(64)}`, false],
    [`blake3:${'a'.repeat(64)}`, true],
    ['multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8', true],
    ['sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564', true],
    ['Sha256:abc', false],
    ['sha256', false],
    [':abc', false],
    ['sha256:', false],
    ['sha256:abc def', false],
    ['sha..256:abc', false],
  ])('%s → %s', (text, expected) => {
    expect(isDigest(text)).toBe(expected);
  });
});

describe('formatImageRef and splitReference', () => {
  it('writes the normalized form', () => {
    const result = parseImageRef(`nginx:1.25@${SHA256}`);
    if (!result.ok) throw new Error(result.reason);
    expect(formatImageRef(result.ref)).toBe(`docker.io/library/nginx:1.25@${SHA256}`);
    expect(formatImageRef({ domain: 'ghcr.io', path: 'a/b' })).toBe('ghcr.io/a/b');
  });

  it('round-trips every valid row through formatImageRef', () => {
    for (const row of valid) {
      const result = parseImageRef(row.input);
      if (!result.ok) throw new Error(result.reason);
      expect(parseImageRef(formatImageRef(result.ref))).toEqual(result);
    }
  });

  it.each([
    ['nginx', { name: 'nginx' }],
    ['nginx:1', { name: 'nginx', tag: '1' }],
    ['localhost:5000/a', { name: 'localhost:5000/a' }],
    ['localhost:5000/a:1@sha256:x', { name: 'localhost:5000/a', tag: '1', digest: 'sha256:x' }],
    ['a@sha256:x', { name: 'a', digest: 'sha256:x' }],
  ])('splits %s', (text, expected) => {
    expect(splitReference(text)).toEqual(expected);
  });
});
