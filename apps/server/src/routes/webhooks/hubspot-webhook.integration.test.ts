import {
  type HubSpotSimulator,
  hubspotSignatureV3 as signatureV3,
  startHubSpotSimulator,
} from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';

// HubSpot's app webhooks for a connection, sent by the simulator (events batched in one signed
// delivery, v3 signature over method + address + body + timestamp) to the real route: a change to a
// synced object type queues a run of its sync, a few seconds later so that HubSpot's search index
// holds it; a bad signature, a stale delivery, a repeated event or a wrong address queue nothing.
let t: TestApp;
let sim: HubSpotSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const CLIENT_SECRET = 'hubspot-app-client-secret';
// As in the private app's Webhooks tab: the target URL is set once Lockstep shows it.
const hooks = {
  targetUrl: 'http://localhost/unset',
  clientSecret: CLIENT_SECRET,
  fetch: ((input, init) => injectAsFetch(t.app)(input, init)) as typeof fetch,
};

const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** Runs of the sync the queue holds from webhooks, with how far ahead each is due. */
async function webhookRuns(coreBaseId: string) {
  return (
    await sql<{ due_in_s: number }>`select extract(epoch from start_after - now())::float8 as due_in_s
       from pgboss.job where name = 'sync-run' and data->>'coreBaseId' = ${coreBaseId}
        and data->>'trigger' = 'webhook'`.execute(t.ctx.db)
  ).rows;
}

beforeAll(async () => {
  sim = await startHubSpotSimulator({ idSeed: 5, rateLimit: false, webhooks: hooks });
  t = await createTestApp({ LOCKSTEP_HUBSPOT_API_URL: sim.url }, { runWorkers: false });
  user = await signUp(t.app, 'hubspot-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

async function hubspotSync(items: Record<string, string>) {
  const connection = await api('POST', '/rest/external-connections', {
    type: 'hubspot',
    connectionItems: items,
  });
  const core = await api('POST', '/rest/core-bases', { name: 'HubSpot webhooks' });
  const attached = await api('POST', '/rest/external-bases', {
    type: 'hubspot',
    name: 'HubSpot',
    remoteId: String(sim.state.portalId),
    coreBaseId: core.id,
    externalConnectionId: connection.id,
    side: 'left',
  });
  await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();
  const debug = await api('GET', `/rest/external-bases/${attached.leftExternalBase.id}/webhooks/debug`);
  return { connection, core, webhookUrl: debug.webhookUrl as string };
}

describe('HubSpot webhooks', () => {
  it('queues a delayed run for signed events about a synced object type, once per event id', async () => {
    const { connection, core, webhookUrl } = await hubspotSync({
      accessToken: sim.token,
      clientSecret: CLIENT_SECRET,
    });
    expect(webhookUrl).toMatch(new RegExp(`/webhooks/hubspot/${connection.id}/[A-Za-z0-9_-]{32}$`));
    hooks.targetUrl = webhookUrl;

    // Two edits in HubSpot's UI: one delivery of two events, checked and taken.
    const [a, b] = sim.state.list('contacts');
    sim.mutate('contacts', a?.id as string, { firstname: 'Edited in HubSpot' });
    sim.mutate('contacts', b?.id as string, { lastname: 'Also edited' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks?.deliveries.at(-1);
    expect(delivery?.events.map((e) => e.subscriptionType)).toEqual([
      'contact.propertyChange',
      'contact.propertyChange',
    ]);
    expect(delivery?.status).toBe(200);
    const runs = await webhookRuns(core.id);
    expect(runs).toHaveLength(1);
    // Due once HubSpot's search index has caught up (5 s), not at once.
    expect(runs[0]?.due_in_s).toBeGreaterThan(2);
    expect(runs[0]?.due_in_s).toBeLessThanOrEqual(5);

    // The same delivery again (HubSpot retries; a replay within 5 minutes): its events are taken once.
    const path = new URL(webhookUrl).pathname;
    const again = await t.app.inject({
      method: 'POST',
      url: path,
      headers: {
        'content-type': 'application/json',
        'x-hubspot-request-timestamp': delivery?.timestamp as string,
        'x-hubspot-signature-v3': signatureV3(
          CLIENT_SECRET,
          'POST',
          webhookUrl,
          delivery?.body as string,
          delivery?.timestamp as string,
        ),
      },
      payload: delivery?.body as string,
    });
    expect(again.json()).toMatchObject({ received: true, queued: 0, duplicates: 2 });

    // Forged (signed with another secret), stale (signed, but 6 minutes old), or at a guessed address:
    // refused in the error envelope.
    const body = JSON.stringify([{ ...delivery?.events[0], eventId: 987654 }]);
    const post = (secret: string, at: number, url = path) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          'x-hubspot-request-timestamp': String(at),
          'x-hubspot-signature-v3': signatureV3(secret, 'POST', webhookUrl, body, String(at)),
        },
        payload: body,
      });
    const forged = await post('not-the-secret', Date.now());
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    const stale = await post(CLIENT_SECRET, Date.now() - 6 * 60_000);
    expect(stale.statusCode).toBe(400);
    expect(stale.json().response.userFacingMessage).toMatch(/too old/);
    const guessed = await post(
      CLIENT_SECRET,
      Date.now(),
      `/webhooks/hubspot/${connection.id}/${'A'.repeat(32)}`,
    );
    expect(guessed.statusCode).toBe(404);
    // None of them woke the sync again, and the fresh one is still taken.
    expect(await webhookRuns(core.id)).toHaveLength(1);
    await sql`delete from pgboss.job where name = 'sync-run' and data->>'coreBaseId' = ${core.id}`.execute(
      t.ctx.db,
    );
    expect((await post(CLIENT_SECRET, Date.now())).json()).toMatchObject({ received: true, queued: 1 });
    expect(await webhookRuns(core.id)).toHaveLength(1);
  });

  it('says a connection without a client secret cannot take webhooks', async () => {
    const { webhookUrl } = await hubspotSync({ accessToken: sim.token });
    const res = await t.app.inject({
      method: 'POST',
      url: new URL(webhookUrl).pathname,
      headers: { 'content-type': 'application/json' },
      payload: '[]',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().response.userFacingMessage).toMatch(/client secret/);
  });
});
