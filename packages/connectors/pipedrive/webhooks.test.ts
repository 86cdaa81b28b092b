import { type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipedrivePort } from './port';
import { parsePipedriveWebhook, verifyPipedriveBasicAuth } from './webhooks';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Pipedrive webhook deliveries', () => {
  it('carry the Basic credentials the webhook was made with, user lockstep', () => {
    expect(verifyPipedriveBasicAuth('pw-1', basic('lockstep', 'pw-1'))).toBe(true);
    expect(
      verifyPipedriveBasicAuth('pw-1', `basic  ${Buffer.from('lockstep:pw-1').toString('base64')}`),
    ).toBe(true);
    expect(verifyPipedriveBasicAuth('pw-1', basic('lockstep', 'pw-2'))).toBe(false);
    expect(verifyPipedriveBasicAuth('pw-1', basic('someone', 'pw-1'))).toBe(false);
    expect(verifyPipedriveBasicAuth('pw-1', 'Bearer pw-1')).toBe(false);
    expect(verifyPipedriveBasicAuth('pw-1', undefined)).toBe(false);
    expect(verifyPipedriveBasicAuth('', basic('lockstep', ''))).toBe(false);
  });

  it('name their event by meta.id (the same on a retry) and their table by meta.entity', () => {
    const meta = {
      id: 'e-1',
      entity: 'person',
      entity_id: '5',
      action: 'change',
      webhook_id: '7',
      attempt: 1,
    };
    const event = parsePipedriveWebhook(JSON.stringify({ data: {}, previous: {}, meta }));
    expect(event).toEqual({ eventId: 'pipedrive:e-1', tableRemoteId: 'persons', webhookId: '7' });
    const retry = parsePipedriveWebhook(
      JSON.stringify({ data: {}, previous: {}, meta: { ...meta, attempt: 2 } }),
    );
    expect(retry?.eventId).toBe(event?.eventId);
    expect(parsePipedriveWebhook(JSON.stringify({ meta: { ...meta, entity: 'deal' } }))?.tableRemoteId).toBe(
      'deals',
    );
    expect(
      parsePipedriveWebhook(JSON.stringify({ meta: { ...meta, entity: 'activity' } }))?.tableRemoteId,
    ).toBeNull();
    // Without an id, what names the change stands in for it.
    const { id: _id, ...noId } = meta;
    expect(parsePipedriveWebhook(JSON.stringify({ meta: noId }))?.eventId).toMatch(
      /^pipedrive:person:5:change:/,
    );
    expect(parsePipedriveWebhook('{"data":{}}')).toBeNull();
    expect(parsePipedriveWebhook('nope')).toBeNull();
  });
});

describe('Pipedrive port: the webhooks', () => {
  let sim: PipedriveSimulator;
  const port = () => createPipedrivePort({ apiUrl: sim.url, client: { perTwoSeconds: 0 } });
  const items = () => ({ apiToken: sim.token });
  const url = 'https://lockstep.example/webhooks/pipedrive/c/k';
  const company = () => String(sim.state.companyId);
  const ours = () =>
    sim.webhooks
      .active()
      .filter((w) => w.subscription_url.startsWith(url))
      .map((w) => ({ id: String(w.id), object: w.event_object, action: w.event_action, version: w.version }));
  beforeAll(async () => {
    sim = await startPipedriveSimulator({ seed: false, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('are made once per object (v2, every action, Basic auth), kept, and made again when deleted in Pipedrive', async () => {
    const hook = await port().ensureWebhook(items(), company(), url, null);
    expect(ours()).toEqual([
      expect.objectContaining({ object: 'person', action: '*', version: '2.0' }),
      expect.objectContaining({ object: 'organization', action: '*', version: '2.0' }),
      expect.objectContaining({ object: 'deal', action: '*', version: '2.0' }),
    ]);
    expect(hook.id).toBe(
      ours()
        .map((w) => w.id)
        .join(','),
    );
    for (const w of sim.webhooks.active()) {
      expect(w.http_auth_user).toBe('lockstep');
      expect(w.http_auth_password).toBe(hook.secret);
    }
    expect(hook.secret.length).toBeGreaterThanOrEqual(32);

    // All there: the same ones, nothing made.
    expect(await port().ensureWebhook(items(), company(), url, hook)).toBe(hook);
    expect(ours()).toHaveLength(3);

    // The deals one deleted in Pipedrive: made again, with the same password; the others kept.
    const [person, organization, deal] = hook.id.split(',');
    sim.webhooks.remove(Number(deal));
    const again = await port().ensureWebhook(items(), company(), url, hook);
    expect(again.secret).toBe(hook.secret);
    const [p2, o2, d2] = again.id.split(',');
    expect([p2, o2]).toEqual([person, organization]);
    expect(d2).not.toBe(deal);
    expect(ours()).toHaveLength(3);

    // Forgotten by Lockstep (its answer lost): new ones with a new password, the unknown ones deleted.
    const fresh = await port().ensureWebhook(items(), company(), url, null);
    expect(fresh.secret).not.toBe(hook.secret);
    expect(
      ours()
        .map((w) => w.id)
        .join(','),
    ).toBe(fresh.id);
  });

  it('leave other webhooks of the company alone', async () => {
    const other = sim.webhooks.add(
      {
        subscription_url: 'https://elsewhere.example/hook',
        event_action: '*',
        event_object: 'deal',
        name: 'x',
        version: '2.0',
      },
      sim.state.users[0]?.id as number,
    );
    await port().ensureWebhook(items(), company(), `${url}/2`, null);
    expect(sim.webhooks.active().map((w) => w.id)).toContain(other.id);
  });
});
