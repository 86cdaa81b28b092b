import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseHubSpotWebhook, verifyHubSpotSignatureV3 } from './webhooks';

const sign = (secret: string, uri: string, body: string, ts: string) =>
  createHmac('sha256', secret).update(`POST${uri}${body}${ts}`).digest('base64');

describe('HubSpot webhooks', () => {
  const uri = 'https://lockstep.example/webhooks/hubspot/c/k';
  const body = '[{"eventId":1}]';

  it('takes a v3 signature over method, address, body and timestamp, within 5 minutes', () => {
    const now = 1_800_000_000_000;
    const ts = String(now - 60_000);
    const input = { clientSecret: 's3cret', method: 'POST', uri, body, timestamp: ts, now };
    expect(verifyHubSpotSignatureV3({ ...input, signature: sign('s3cret', uri, body, ts) })).toBe('ok');
    expect(verifyHubSpotSignatureV3({ ...input, signature: sign('other', uri, body, ts) })).toBe(
      'bad_signature',
    );
    // Signed for another address (a delivery meant for someone else) or another body.
    expect(verifyHubSpotSignatureV3({ ...input, signature: sign('s3cret', `${uri}x`, body, ts) })).toBe(
      'bad_signature',
    );
    const old = String(now - 6 * 60_000);
    expect(
      verifyHubSpotSignatureV3({ ...input, timestamp: old, signature: sign('s3cret', uri, body, old) }),
    ).toBe('stale');
    expect(verifyHubSpotSignatureV3({ ...input, signature: undefined })).toBe('bad_signature');
  });

  it('names the object type of each event, from the subscription or the generic objectTypeId', () => {
    const events = parseHubSpotWebhook(
      JSON.stringify([
        { eventId: 1, subscriptionType: 'contact.propertyChange', objectId: 11 },
        { eventId: 2, subscriptionType: 'company.deletion', objectId: 12 },
        { eventId: 3, subscriptionType: 'deal.merge', objectId: 13 },
        { eventId: 4, subscriptionType: 'object.creation', objectTypeId: '0-1', objectId: 14 },
        { eventId: 5, subscriptionType: 'ticket.creation', objectId: 15 },
        { subscriptionType: 'contact.creation', objectId: 16 },
      ]),
    );
    expect(events).toEqual([
      { eventId: '1', objectType: 'contacts', objectId: '11' },
      { eventId: '2', objectType: 'companies', objectId: '12' },
      { eventId: '3', objectType: 'deals', objectId: '13' },
      { eventId: '4', objectType: 'contacts', objectId: '14' },
    ]);
    expect(parseHubSpotWebhook('not json')).toEqual([]);
    expect(parseHubSpotWebhook('{"eventId":1}')).toEqual([]);
  });
});
