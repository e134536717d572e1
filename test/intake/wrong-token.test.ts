/**
 * A wrong token's 401 names which token the route expected, by the variable it is configured
 * under, and never a token value (the presented one, the configured ones) nor an entry's name.
 */
import { describe, expect, it } from 'vitest';
import { IntakeCredentials, tokenHash } from '../../src/intake/credentials.js';

const CI = 'ci-token-value-0123456789';
const REGISTRY = 'registry-token-value-0123456789';
const SCOPED = 'scoped-token-value-0123456789';
const WRONG = 'wrong-token-value-0123456789';

function refusal(credentials: IntakeCredentials, token: string, source: string): string {
  try {
    credentials.authenticate(token, source, false);
  } catch (error) {
    const { status, message } = error as { status: number; message: string };
    expect(status).toBe(401);
    for (const secret of [CI, REGISTRY, SCOPED, WRONG, 'acme-ci']) expect(message).not.toContain(secret);
    return message;
  }
  throw new Error('the token was accepted');
}

describe('a wrong token is answered with the token that was expected', () => {
  const legacy = new IntakeCredentials([], { ciToken: CI, registryToken: REGISTRY });
  const scoped = new IntakeCredentials(
    [{ name: 'acme-ci', hash: Buffer.from(tokenHash(SCOPED), 'hex'), owners: ['acme'], sources: ['ci'] }],
    { registryToken: REGISTRY },
  );

  it('on the CI API: ESCALATOR_CI_TOKEN (the registry token sent there by mistake included)', () => {
    expect(refusal(legacy, WRONG, 'ci')).toBe(
      'the Authorization token does not match any token the CI API accepts; expected ESCALATOR_CI_TOKEN (never a token value in this answer)',
    );
    expect(refusal(legacy, REGISTRY, 'ci')).toContain('expected ESCALATOR_CI_TOKEN');
  });

  it('on a registry route: ESCALATOR_REGISTRY_TOKEN (the CI token sent there by mistake included)', () => {
    expect(refusal(legacy, CI, 'distribution')).toBe(
      'the Authorization token does not match any token /registry/distribution accepts; expected ESCALATOR_REGISTRY_TOKEN (never a token value in this answer)',
    );
  });

  it('with scoped tokens: an ESCALATOR_INTAKE_TOKENS entry for the route, without naming it', () => {
    expect(refusal(scoped, WRONG, 'ci')).toBe(
      'the Authorization token does not match any token the CI API accepts; expected the token of an ESCALATOR_INTAKE_TOKENS entry whose sources include ci (or list none) (never a token value in this answer)',
    );
    expect(refusal(scoped, WRONG, 'harbor')).toContain('expected ESCALATOR_REGISTRY_TOKEN (never');
  });

  it('with GitHub Actions OIDC only: an id-token', () => {
    expect(refusal(new IntakeCredentials([]), WRONG, 'ci')).toContain(
      'expected a GitHub Actions id-token (ESCALATOR_CI_OIDC_AUDIENCE)',
    );
  });
});
