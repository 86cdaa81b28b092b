import { createHmac } from 'node:crypto';
import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAttioPort } from './port';
import { attioDeliveryId, parseAttioWebhook, verifyAttioSignature } from './webhooks';

const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

describe('Attio webhook deliveries', () => {
  const body = JSON.stringify({
    webhook_id: 'w1',
    events: [
      { event_type: 'record.updated', id: { workspace_id: 'ws', object_id: 'o-people', record_id: 'r1' } },
      { event_type: 'record.deleted', id: { workspace_id: 'ws', object_id: 'o-deals', record_id: 'r2' } },
      { event_type: 'record.created', id: { workspace_id: 'ws', object_id: 'o-people', record_id: 'r3' } },
      { event_type: 'list-entry.updated', id: { workspace_id: 'ws', list_id: 'l', entry_id: 'e' } },
    ],
  });

  it('takes the hex HMAC-SHA256 of the raw body under the webhook secret, and nothing else', () => {
    expect(verifyAttioSignature('s3cret', body, sign('s3cret', body))).toBe(true);
    expect(verifyAttioSignature('s3cret', body, sign('s3cret', body).toUpperCase())).toBe(true);
    expect(verifyAttioSignature('s3cret', body, sign('other', body))).toBe(false);
    expect(verifyAttioSignature('s3cret', `${body} `, sign('s3cret', body))).toBe(false);
    expect(verifyAttioSignature('s3cret', body, undefined)).toBe(false);
    expect(verifyAttioSignature('', body, sign('', body))).toBe(false);
  });

  it('names the webhook and the objects of its record events, once each; other events are left out', () => {
    expect(parseAttioWebhook(body)).toEqual({ webhookId: 'w1', objectIds: ['o-people', 'o-deals'] });
    expect(parseAttioWebhook('{"webhook_id":"w1","events":[{"event_type":"note.created"}]}')).toEqual({
      webhookId: 'w1',
      objectIds: [],
    });
    expect(parseAttioWebhook('not json')).toBeNull();
  });

  it("is identified by its Idempotency-Key (the same on Attio's retries), else by its body", () => {
    expect(attioDeliveryId('k-1', body)).toBe(attioDeliveryId('k-1', `${body} `));
    expect(attioDeliveryId('k-1', body)).not.toBe(attioDeliveryId('k-2', body));
    expect(attioDeliveryId(undefined, body)).toBe(attioDeliveryId('  ', body));
    expect(attioDeliveryId(undefined, body)).not.toBe(attioDeliveryId(undefined, `${body} `));
  });
});

describe('Attio port: the webhook', () => {
  let sim: AttioSimulator;
  const port = () => createAttioPort({ apiUrl: sim.url, client: { readsPerSecond: 0, writesPerSecond: 0 } });
  const items = () => ({ apiKey: sim.token });
  const url = 'https://lockstep.example/webhooks/attio/c/k';
  beforeAll(async () => {
    sim = await startAttioSimulator({ idSeed: 3, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('is made once with the record events of every object, kept, and made again when deleted in Attio', async () => {
    const workspace = sim.state.workspace.id;
    const hook = await port().ensureWebhook(items(), workspace, url, null);
    const made = sim.state.webhooks.get(hook.id);
    expect(made?.target_url).toBe(url);
    expect(made?.secret).toBe(hook.secret);
    expect(made?.subscriptions).toEqual([
      { event_type: 'record.created', filter: null },
      { event_type: 'record.updated', filter: null },
      { event_type: 'record.deleted', filter: null },
      { event_type: 'record.merged', filter: null },
    ]);

    // Still there: the same one, nothing made.
    expect(await port().ensureWebhook(items(), workspace, url, hook)).toBe(hook);
    expect(sim.state.webhooks.size).toBe(1);

    // Deleted in Attio: a new one, with its own secret.
    sim.state.webhooks.delete(hook.id);
    const again = await port().ensureWebhook(items(), workspace, url, hook);
    expect(again.id).not.toBe(hook.id);
    expect(again.secret).toBe(sim.state.webhooks.get(again.id)?.secret);

    // The server's address changed: a webhook there, and the old one goes.
    const moved = await port().ensureWebhook(items(), workspace, `${url}2`, again);
    expect([...sim.state.webhooks.keys()]).toEqual([moved.id]);
    expect(sim.state.webhooks.get(moved.id)?.target_url).toBe(`${url}2`);
  });

  it('is not asked of Attio for an address that is not https (Attio refuses them)', async () => {
    const before = sim.requestLog.total;
    await expect(
      port().ensureWebhook(items(), sim.state.workspace.id, 'http://localhost:3000/webhooks/attio/c/k', null),
    ).rejects.toMatchObject({
      code: 'validation',
      userFacingMessage: expect.stringMatching(/LOCKSTEP_PUBLIC_URL/),
    });
    expect(sim.requestLog.total).toBe(before);
  });

  it('tells a key without the webhook scope apart', async () => {
    sim.addToken('attio_no_webhooks', ['record_permission:read-write', 'object_configuration:read']);
    await expect(
      port().ensureWebhook({ apiKey: 'attio_no_webhooks' }, sim.state.workspace.id, url, null),
    ).rejects.toMatchObject({ code: 'permission_denied' });
  });
});
