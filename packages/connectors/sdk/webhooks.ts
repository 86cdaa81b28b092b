import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureEncoding = 'hex' | 'base64';

/** HMAC-SHA256 of a payload, hex or base64 (apps differ). The key may be raw bytes (Airtable's decoded macSecret). */
export function hmacSha256(
  secret: string | Buffer,
  payload: string | Buffer,
  encoding: SignatureEncoding = 'hex',
): string {
  return createHmac('sha256', secret).update(payload).digest(encoding);
}

/**
 * Compares two strings in constant time for equal lengths; different lengths are refused at once
 * (timingSafeEqual throws on them, and the length of a signature is no secret).
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Checks a received signature against the HMAC-SHA256 of the raw body. `prefix` is stripped from the
 * received value first (e.g. `sha256=` or `hmac-sha256=`); hex is compared case-insensitively.
 */
export function verifyHmacSha256(options: {
  secret: string | Buffer;
  payload: string | Buffer;
  signature: string | null | undefined;
  encoding?: SignatureEncoding;
  prefix?: string;
}): boolean {
  const encoding = options.encoding ?? 'hex';
  let received = options.signature?.trim();
  if (!received) return false;
  if (options.prefix) {
    if (!received.startsWith(options.prefix)) return false;
    received = received.slice(options.prefix.length);
  }
  const expected = hmacSha256(options.secret, options.payload, encoding);
  return encoding === 'hex' ? safeEqual(received.toLowerCase(), expected) : safeEqual(received, expected);
}

/**
 * Whether a signed timestamp is close enough to now to accept (replay protection: Stripe and HubSpot
 * use 5 minutes). Accepts seconds or milliseconds since the epoch; a value in the future counts too.
 */
export function isFreshTimestamp(
  timestamp: number | string,
  options: { toleranceMs?: number; now?: number } = {},
): boolean {
  const value = Number(timestamp);
  if (!Number.isFinite(value) || value <= 0) return false;
  // Below 1e12 it cannot be milliseconds of any date after 2001: it is seconds.
  const ms = value < 1e12 ? value * 1000 : value;
  const now = options.now ?? Date.now();
  return Math.abs(now - ms) <= (options.toleranceMs ?? 5 * 60_000);
}

export type ReplayVerdict = 'accept' | 'stale' | 'duplicate';

/**
 * Refuses deliveries outside the tolerance and the ones already seen inside it (same event id). Ids
 * are only remembered for the tolerance: anything older is refused as stale anyway. One process only.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();
  private readonly toleranceMs: number;
  private readonly now: () => number;

  constructor(options: { toleranceMs?: number; now?: () => number } = {}) {
    this.toleranceMs = options.toleranceMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  check(eventId: string, timestamp: number | string): ReplayVerdict {
    const now = this.now();
    for (const [id, at] of this.seen) if (now - at > this.toleranceMs) this.seen.delete(id);
    if (!isFreshTimestamp(timestamp, { toleranceMs: this.toleranceMs, now })) return 'stale';
    if (this.seen.has(eventId)) return 'duplicate';
    this.seen.set(eventId, now);
    return 'accept';
  }
}
