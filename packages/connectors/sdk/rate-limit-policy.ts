// The limits a connector declares (connector.ts) and the limiter enforces (rate-limiter.ts): apart
// from both, so neither imports the other for them.

/** At most `limit` cost units in any `windowMs` sliding window. */
export type RateLimitWindow = { limit: number; windowMs: number };

/**
 * An app's documented limits, declared by its connector. Every window applies at once (e.g. 5/s and
 * 100/min); `scope` says what the key passed to `acquire` stands for (base, token, account, ...).
 */
export type RateLimitPolicy = {
  windows: RateLimitWindow[];
  scope: 'base' | 'token' | 'account' | 'project' | 'user';
};
