import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import type { Auth } from './auth';
import { JWT_AUDIENCE, JWT_ISSUER } from './auth';

export type TokenClaims = {
  userId: string;
  /** The session the token was issued for (tokens from before this claim existed carry none). */
  sessionId: string | null;
  email: string;
  role: string;
  impersonatedBy: string | null;
};

/**
 * Verifies the Bearer JWTs that better-auth's jwt plugin issues. The public keys are read in
 * process (no HTTP to ourselves) and cached; an unknown key id reloads them once (key rotation).
 */
export function createBearerVerifier(auth: Auth) {
  let keySet: ReturnType<typeof createLocalJWKSet> | null = null;
  let loadedAt = 0;

  async function load() {
    const jwks = (await auth.api.getJwks()) as JSONWebKeySet;
    keySet = createLocalJWKSet(jwks);
    loadedAt = Date.now();
    return keySet;
  }

  async function verifyWith(set: ReturnType<typeof createLocalJWKSet>, token: string): Promise<TokenClaims> {
    const { payload } = await jwtVerify(token, set, { issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('token has no subject');
    return {
      userId: payload.sub,
      sessionId: typeof payload.sid === 'string' ? payload.sid : null,
      email: typeof payload.email === 'string' ? payload.email : '',
      role: typeof payload.role === 'string' ? payload.role : 'user',
      impersonatedBy: typeof payload.impersonatedBy === 'string' ? payload.impersonatedBy : null,
    };
  }

  return async function verifyBearer(token: string): Promise<TokenClaims> {
    const set = keySet ?? (await load());
    try {
      return await verifyWith(set, token);
    } catch (error) {
      const code = (error as { code?: string }).code;
      // Reload at most once a second so forged tokens cannot make us reload keys on every request.
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' && Date.now() - loadedAt > 1_000) {
        return verifyWith(await load(), token);
      }
      throw error;
    }
  };
}
