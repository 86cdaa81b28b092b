import { createHmac } from 'node:crypto';
import { type StripeSimulator, startStripeSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';

// Stripe's webhooks for a connection, sent by the simulator (one event per delivery, signed with the
// endpoint's secret in Stripe-Signature) to the real route: an event about a synced table queues a
// run of its sync; a bad signature, a stale delivery, a repeated event or a wrong address queue
// nothing, and events of objects Lockstep does not sync are answered without waking anything.
let t: TestApp;
let sim: StripeSimulator;
let user: Awaited<ReturnType<typeof signUp>>;

const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const sign = (secret: string, body: string, at: number) =>
  `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`;

/** Runs of the sync the queue holds from webhooks. */
async function webhookRuns(coreBaseId: string) {
  return (
    await sql<{ id: string }>`select id from pgboss.job where name = 'sync-run'
        and data->>'coreBaseId' = ${coreBaseId} and data->>'trigger' = 'webhook'`.execute(t.ctx.db)
  ).rows;
}

beforeAll(async () => {
  sim = await startStripeSimulator({
    idSeed: 5,
    rateLimit: false,
    webhooks: { fetch: ((input, init) => injectAsFetch(t.app)(input, init)) as typeof fetch },
  });
  t = await createTestApp({ LOCKSTEP_STRIPE_API_URL: sim.url }, { runWorkers: false });
  user = await signUp(t.app, 'stripe-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

async function stripeSync() {
  const connection = await api('POST', '/rest/external-connections', {
    type: 'stripe',
    connectionItems: { secretKey: sim.token },
  });
  const [base] = (await api('PATCH', `/rest/external-connections/${connection.id}/fetch-base-previews`, {}))
    .basePreviews as { remoteId: string }[];
  const core = await api('POST', '/rest/core-bases', { name: 'Stripe webhooks' });
  const attached = await api('POST', '/rest/external-bases', {
    type: 'stripe',
    name: 'Stripe',
    remoteId: base?.remoteId,
    coreBaseId: core.id,
    externalConnectionId: connection.id,
    side: 'left',
  });
  await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();
  const debug = await api('GET', `/rest/external-bases/${attached.leftExternalBase.id}/webhooks/debug`);
  return { connection, core, webhookUrl: debug.webhookUrl as string };
}

describe('Stripe webhooks', () => {
  it('queues a run for a signed event about a synced table, once per event id', async () => {
    const { connection, core, webhookUrl } = await stripeSync();
    expect(webhookUrl).toMatch(new RegExp(`/webhooks/stripe/${connection.id}/[A-Za-z0-9_-]{32}$`));
    // As in Stripe's Dashboard: an endpoint with Lockstep's address; its signing secret to the connection.
    const { secret } = sim.addWebhookEndpoint(webhookUrl, ['customer.updated']);
    await api('PATCH', `/rest/external-connections/${connection.id}`, {
      connectionItems: { secretKey: sim.token, webhookSecret: secret },
    });

    // An edit in the Dashboard: one signed delivery, checked and taken.
    const customer = sim.state.all('customer', false)[0]?.id as string;
    sim.update('customer', customer, { name: 'Edited in Stripe' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.at(-1);
    expect(delivery?.eventType).toBe('customer.updated');
    expect(delivery?.status).toBe(200);
    expect(await webhookRuns(core.id)).toHaveLength(1);

    // The same delivery again (Stripe retries it): its event is taken once.
    const path = new URL(webhookUrl).pathname;
    const post = (body: string, signature: string, url = path) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
        payload: body,
      });
    const body = delivery?.body as string;
    const again = await post(body, sign(secret, body, Math.floor(Date.now() / 1000)));
    expect(again.json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });

    // Forged, stale (6 minutes old) or at a guessed address: refused in the error envelope.
    const other = body.replace(delivery?.eventId as string, 'evt_other');
    const now = Math.floor(Date.now() / 1000);
    const forged = await post(other, sign('whsec_not_the_secret', other, now));
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    const stale = await post(other, sign(secret, other, now - 360));
    expect(stale.statusCode).toBe(400);
    expect(stale.json().response.userFacingMessage).toMatch(/too old/);
    const guessed = await post(
      other,
      sign(secret, other, now),
      `/webhooks/stripe/${connection.id}/${'A'.repeat(32)}`,
    );
    expect(guessed.statusCode).toBe(404);
    // An event about an object Lockstep does not sync: answered, nothing woken.
    const charge = JSON.stringify({
      id: 'evt_charge',
      type: 'charge.succeeded',
      data: { object: { id: 'ch_1' } },
    });
    expect((await post(charge, sign(secret, charge, now))).json()).toMatchObject({
      received: true,
      queued: 0,
    });
    expect(await webhookRuns(core.id)).toHaveLength(1);
    // The fresh event signed right is taken.
    await sql`delete from pgboss.job where name = 'sync-run' and data->>'coreBaseId' = ${core.id}`.execute(
      t.ctx.db,
    );
    expect((await post(other, sign(secret, other, now))).json()).toMatchObject({ received: true, queued: 1 });
    expect(await webhookRuns(core.id)).toHaveLength(1);
  });

  it('says a connection without a signing secret cannot take webhooks', async () => {
    const { webhookUrl } = await stripeSync();
    const res = await t.app.inject({
      method: 'POST',
      url: new URL(webhookUrl).pathname,
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().response.userFacingMessage).toMatch(/signing secret/);
  });
});
