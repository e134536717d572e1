/**
 * The JWT verifier of the OIDC intakes (src/intake/jwt.ts) on what `jose` decides for it and the
 * intakes' other tests do not reach: which key of a JWKS verifies a token, and hostile headers.
 * Tokens are signed here with node:crypto, as a provider would, not with the library under test.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createJwtVerifier } from '../../src/intake/jwt.js';

const provider = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const dir = mkdtempSync(join(tmpdir(), 'escalator-jwt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const now = 1_800_000_000;
const claims = { iss: 'https://issuer.example', aud: 'escalator', iat: now - 30, exp: now + 300 };

function token(header: Record<string, unknown>, body: Record<string, unknown>, key: KeyObject): string {
  const head = Buffer.from(JSON.stringify(header)).toString('base64url');
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${head}.${payload}.${sign('RSA-SHA256', Buffer.from(`${head}.${payload}`), key).toString('base64url')}`;
}

function verifierWith(keys: Array<Record<string, unknown>>) {
  const path = join(dir, `jwks-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify({ keys }));
  return createJwtVerifier({
    issuers: ['https://issuer.example'],
    audience: 'escalator',
    jwks: path,
    maxLifetimeSeconds: 3600,
    issuerName: 'the test issuer',
    audienceSetting: 'TEST_AUDIENCE',
    jwksSetting: 'TEST_JWKS',
    retryNote: 'retry',
    now: () => now * 1000,
  });
}

const jwk = (key: KeyObject, extra: Record<string, unknown>) => ({ ...key.export({ format: 'jwk' }), ...extra });

describe('the OIDC JWT verifier', () => {
  it('takes a token when one of two keys sharing its kid verifies it', async () => {
    const verify = verifierWith([
      jwk(other.publicKey, { kid: 'k1', alg: 'RS256' }),
      jwk(provider.publicKey, { kid: 'k1', alg: 'RS256' }),
    ]);
    await expect(verify(token({ alg: 'RS256', kid: 'k1' }, claims, provider.privateKey))).resolves.toMatchObject({
      iss: 'https://issuer.example',
    });
    await expect(verify(token({ alg: 'RS256', kid: 'k1' }, claims, ec.privateKey as KeyObject))).rejects.toThrow(
      'the token signature is invalid',
    );
  });

  it('uses no key the JWKS keeps for encryption, nor one of another type', async () => {
    const verify = verifierWith([
      jwk(provider.publicKey, { kid: 'enc', use: 'enc' }),
      jwk(ec.publicKey, { kid: 'ec', alg: 'ES256' }),
    ]);
    await expect(verify(token({ alg: 'RS256', kid: 'enc' }, claims, provider.privateKey))).rejects.toThrow(
      'the token was signed with an unknown key',
    );
    await expect(verify(token({ alg: 'RS256', kid: 'ec' }, claims, provider.privateKey))).rejects.toThrow(
      'the token was signed with an unknown key',
    );
  });

  it.each([
    ['alg none', { alg: 'none', kid: 'k1' }, 'token algorithm none is not accepted'],
    ['an HMAC alg (the public key as a secret)', { alg: 'HS256', kid: 'k1' }, 'token algorithm HS256 is not accepted'],
    ['no kid', { alg: 'RS256' }, 'the token names no signing key (kid)'],
    ['a critical extension nobody understands', { alg: 'RS256', kid: 'k1', crit: ['x'], x: 1 }, 'signature is invalid'],
  ])('refuses a header with %s', async (_name, header, message) => {
    const verify = verifierWith([jwk(provider.publicKey, { kid: 'k1', alg: 'RS256' })]);
    await expect(verify(token(header, claims, provider.privateKey))).rejects.toThrow(message);
  });

  it.each([
    ['exp that is not a number', { exp: 'soon' }, 'the token has no expiry (exp)'],
    ['nbf that is not a number', { nbf: 'now' }, 'the token is not valid yet (nbf)'],
    ['iat that is not a number', { iat: 'then' }, 'the token has no issue time (iat)'],
    ['no aud', { aud: undefined }, 'the token audience does not match TEST_AUDIENCE'],
    ['exp 30 s ago (inside the skew jose allows, outside ours)', { exp: now - 30 }, 'the token has expired'],
  ])('refuses claims with %s', async (_name, override, message) => {
    const verify = verifierWith([jwk(provider.publicKey, { kid: 'k1', alg: 'RS256' })]);
    await expect(
      verify(token({ alg: 'RS256', kid: 'k1' }, { ...claims, ...override }, provider.privateKey)),
    ).rejects.toMatchObject({ status: 401, message: expect.stringContaining(message) });
  });
});
