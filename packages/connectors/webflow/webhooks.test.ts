import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  parseWebflowWebhook,
  verifyWebflowSignature,
  webflowDeliveryId,
  webflowWebhookSecrets,
} from './webhooks';

const sign = (key: string, timestamp: string, body: string) =>
  createHmac('sha256', key).update(`${timestamp}:${body}`).digest('hex');

describe('Webflow webhook signatures', () => {
  const body = JSON.stringify({
    triggerType: 'collection_item_changed',
    payload: { id: 'i1', siteId: 's1', collectionId: 'c1', fieldData: { name: 'A' } },
  });
  const now = 1_700_000_000_000;
  const ts = String(now - 1_000);

  it('accepts a signature any of the keys makes over `timestamp:body`, within five minutes', () => {
    const signature = sign('second', ts, body);
    expect(verifyWebflowSignature({ keys: ['first', 'second'], body, timestamp: ts, signature, now })).toBe(
      'ok',
    );
    expect(verifyWebflowSignature({ keys: ['first'], body, timestamp: ts, signature, now })).toBe(
      'bad_signature',
    );
    // The body alone (without the timestamp) is not what Webflow signs.
    const bodyOnly = createHmac('sha256', 'second').update(body).digest('hex');
    expect(verifyWebflowSignature({ keys: ['second'], body, timestamp: ts, signature: bodyOnly, now })).toBe(
      'bad_signature',
    );
    expect(verifyWebflowSignature({ keys: ['second'], body, timestamp: undefined, signature, now })).toBe(
      'bad_signature',
    );
    const old = String(now - 5 * 60_000 - 1);
    expect(
      verifyWebflowSignature({
        keys: ['second'],
        body,
        timestamp: old,
        signature: sign('second', old, body),
        now,
      }),
    ).toBe('stale');
  });

  it('reads the collection of an item event; other bodies are not deliveries', () => {
    expect(parseWebflowWebhook(body)).toEqual({
      triggerType: 'collection_item_changed',
      siteId: 's1',
      collectionId: 'c1',
      itemId: 'i1',
    });
    expect(parseWebflowWebhook('not json')).toBeNull();
    expect(parseWebflowWebhook('{"payload":{}}')).toBeNull();
  });

  it('names a delivery by its timestamp and body; reads kept secrets', () => {
    expect(webflowDeliveryId(ts, body)).toBe(webflowDeliveryId(ts, body));
    expect(webflowDeliveryId(ts, body)).not.toBe(webflowDeliveryId(String(now), body));
    expect(webflowWebhookSecrets({ secret: '{"w1":"k1","w2":"k2"}' })).toEqual({ w1: 'k1', w2: 'k2' });
    expect(webflowWebhookSecrets({})).toEqual({});
    expect(webflowWebhookSecrets({ secret: 'garbage' })).toEqual({});
  });
});
