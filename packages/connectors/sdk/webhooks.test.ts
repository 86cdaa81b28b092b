import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256, isFreshTimestamp, ReplayGuard, safeEqual, verifyHmacSha256 } from './webhooks';

const body = '{"event":"record.updated","id":"evt_1"}';

describe('hmacSha256', () => {
  it('matches a known HMAC-SHA256 vector (RFC 4231 case 2) in hex and base64', () => {
    const hex = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    expect(hmacSha256('Jefe', 'what do ya want for nothing?', 'hex')).toBe(hex);
    expect(hmacSha256('Jefe', 'what do ya want for nothing?', 'base64')).toBe(
      Buffer.from(hex, 'hex').toString('base64'),
    );
  });
});

describe('safeEqual', () => {
  it('is true only for identical strings, including different lengths', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});

describe('verifyHmacSha256', () => {
  const secret = 'whsec_test';
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  const b64 = createHmac('sha256', secret).update(body).digest('base64');

  it('accepts the right signature with its prefix, in hex (any case) or base64', () => {
    expect(verifyHmacSha256({ secret, payload: body, signature: `sha256=${hex}`, prefix: 'sha256=' })).toBe(
      true,
    );
    expect(verifyHmacSha256({ secret, payload: body, signature: hex.toUpperCase() })).toBe(true);
    expect(verifyHmacSha256({ secret, payload: body, signature: b64, encoding: 'base64' })).toBe(true);
  });

  it('accepts a raw-bytes key (Airtable signs with the base64-decoded macSecret)', () => {
    const key = Buffer.from('c2VjcmV0LWJ5dGVz', 'base64');
    const signature = `hmac-sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
    expect(verifyHmacSha256({ secret: key, payload: body, signature, prefix: 'hmac-sha256=' })).toBe(true);
  });

  it('refuses a tampered body, a wrong secret, a missing prefix, a truncated or absent signature', () => {
    expect(verifyHmacSha256({ secret, payload: `${body} `, signature: hex })).toBe(false);
    expect(verifyHmacSha256({ secret: 'other', payload: body, signature: hex })).toBe(false);
    expect(verifyHmacSha256({ secret, payload: body, signature: hex, prefix: 'sha256=' })).toBe(false);
    expect(verifyHmacSha256({ secret, payload: body, signature: hex.slice(0, 10) })).toBe(false);
    expect(verifyHmacSha256({ secret, payload: body, signature: undefined })).toBe(false);
    expect(verifyHmacSha256({ secret, payload: body, signature: b64 })).toBe(false);
  });
});

describe('isFreshTimestamp', () => {
  const now = Date.parse('2026-06-01T12:00:00Z');
  it('accepts seconds or milliseconds within the tolerance, either side of now', () => {
    expect(isFreshTimestamp(now / 1000 - 299, { now })).toBe(true);
    expect(isFreshTimestamp(String(now / 1000 + 60), { now })).toBe(true);
    expect(isFreshTimestamp(now - 10_000, { now, toleranceMs: 15_000 })).toBe(true);
  });
  it('refuses old, far-future and unreadable timestamps', () => {
    expect(isFreshTimestamp(now / 1000 - 301, { now })).toBe(false);
    expect(isFreshTimestamp(now + 20_000, { now, toleranceMs: 15_000 })).toBe(false);
    expect(isFreshTimestamp('yesterday', { now })).toBe(false);
  });
});

describe('ReplayGuard', () => {
  it('accepts an event once, refuses its replay and stale deliveries, and forgets ids after the tolerance', () => {
    let now = Date.parse('2026-06-01T12:00:00Z');
    const guard = new ReplayGuard({ toleranceMs: 60_000, now: () => now });
    expect(guard.check('evt_1', now / 1000)).toBe('accept');
    expect(guard.check('evt_1', now / 1000)).toBe('duplicate');
    expect(guard.check('evt_2', now / 1000 - 61)).toBe('stale');
    now += 61_000;
    // The old delivery's timestamp is now stale, so a replay of it is still refused.
    expect(guard.check('evt_1', (now - 61_000) / 1000)).toBe('stale');
    expect(guard.check('evt_1', now / 1000)).toBe('accept');
  });
});
