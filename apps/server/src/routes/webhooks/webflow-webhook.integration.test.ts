import { createHmac } from 'node:crypto';
import { startWebflowSimulator, type WebflowSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { ensureAppWebhooks, type SealedWebhooks } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

// Webflow's webhooks for a sync, against the simulator's webhook API: made by API on the site (one
// per item trigger: created, changed, deleted, unpublished); their deliveries (x-webflow-signature
// = hex HMAC-SHA256 of `${x-webflow-timestamp}:${body}`, with the webhook's own secret for a site
// token, the app's client secret for a signed-in connection) go into the real route and queue a run
// of the sync reading the collection; a forged, stale or replayed delivery queues nothing.
let t: TestApp;
let sim: WebflowSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const PUBLIC_URL = 'https://lockstep.test';
const app = { clientId: 'lockstep-webflow-hooks', clientSecret: 'webflow-hooks-client-secret' };
const OAUTH_TOKEN = 'a'.repeat(64);
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const sign = (key: string, timestamp: string, body: string) =>
  createHmac('sha256', key).update(`${timestamp}:${body}`).digest('hex');

async function queuedRuns(coreBaseId: string) {
  const rows = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
     where name = 'sync-run' and data->>'coreBaseId' = ${coreBaseId} and data->>'trigger' = 'webhook'`.execute(
    t.ctx.db,
  );
  return rows.rows[0]?.n ?? 0;
}
const clearRuns = (coreBaseId: string) =>
  sql`delete from pgboss.job where name = 'sync-run' and data->>'coreBaseId' = ${coreBaseId}`.execute(
    t.ctx.db,
  );

async function hooksOf(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return (openSecrets(t.ctx, row) as ReturnType<typeof openSecrets> & SealedWebhooks).appWebhooks ?? {};
}

/** A sync that is on, reading the site through a new connection with these items. */
async function syncOf(connectionItems: Record<string, string>) {
  const connection = await api('POST', '/rest/external-connections', { type: 'webflow', connectionItems });
  const core = await api('POST', '/rest/core-bases', { name: 'Webflow webhooks' });
  await api('POST', '/rest/external-bases', {
    type: 'webflow',
    name: 'Webflow',
    remoteId: sim.siteId,
    coreBaseId: core.id,
    externalConnectionId: connection.id,
    side: 'left',
  });
  await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();
  return { connection, core };
}

const post = (path: string, body: string, headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });

beforeAll(async () => {
  sim = await startWebflowSimulator({
    idSeed: 51,
    seed: { companies: 2, contacts: 3, deals: 0 },
    rateLimit: false,
    oauthApps: [app],
    tokens: [{ token: OAUTH_TOKEN, kind: 'oauth', clientId: app.clientId }],
    webhooks: { fetch: deliver },
  });
  t = await createTestApp(
    {
      LOCKSTEP_WEBFLOW_API_URL: sim.url,
      LOCKSTEP_WEBFLOW_CLIENT_ID: app.clientId,
      LOCKSTEP_WEBFLOW_CLIENT_SECRET: app.clientSecret,
      LOCKSTEP_PUBLIC_URL: PUBLIC_URL,
    },
    { runWorkers: false },
  );
  user = await signUp(t.app, 'webflow-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Webflow webhooks', () => {
  it('site token: makes the four item webhooks once; a signed delivery wakes the sync, a forged, stale or replayed one does not', async () => {
    const contacts = sim.crm?.collections.contacts as string;
    const { connection, core } = await syncOf({ apiToken: sim.token });
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const hook = (await hooksOf(connection.id))[sim.siteId];
    expect(hook?.notificationUrl).toMatch(
      new RegExp(`^${PUBLIC_URL}/webhooks/webflow/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    const made = sim.webhooks.forSite(sim.siteId);
    expect(made.map((w) => w.triggerType).sort()).toEqual([
      'collection_item_changed',
      'collection_item_created',
      'collection_item_deleted',
      'collection_item_unpublished',
    ]);
    expect(made.every((w) => w.url === hook?.notificationUrl)).toBe(true);
    expect(hook?.id.split(',').sort()).toEqual(made.map((w) => w.id).sort());
    // Each site-token webhook signs with its own secret, kept sealed.
    expect(JSON.parse(hook?.secret as string)).toEqual(
      Object.fromEntries(made.map((w) => [w.id, w.secretKey])),
    );
    const creates = sim.requestLog.count({ method: 'POST', path: `/v2/sites/${sim.siteId}/webhooks` });
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    expect(sim.requestLog.count({ method: 'POST', path: `/v2/sites/${sim.siteId}/webhooks` })).toBe(creates);

    // A contact is edited in Webflow: the signed delivery is taken and the sync queued.
    const itemId = [...(sim.state.items.get(contacts)?.keys() ?? [])][0] as string;
    sim.update(contacts, itemId, { name: 'Edited in Webflow' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.at(-1);
    expect(delivery).toMatchObject({ triggerType: 'collection_item_changed', status: 200 });
    expect(await queuedRuns(core.id)).toBe(1);

    // The same delivery again: taken once.
    await clearRuns(core.id);
    const path = new URL(hook?.notificationUrl as string).pathname;
    const body = delivery?.body as string;
    const signed = {
      'x-webflow-timestamp': delivery?.timestamp as string,
      'x-webflow-signature': delivery?.signature as string,
    };
    const replay = await post(path, body, signed);
    expect(replay.json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });

    // Forged (another key, the app's secret included: this connection is not signed in), tampered,
    // unsigned, stale or at a guessed address: refused, nothing queued.
    const now = String(Date.now());
    const forged = await post(path, body, {
      'x-webflow-timestamp': now,
      'x-webflow-signature': sign(app.clientSecret, now, body),
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    expect((await post(path, body.replace(itemId, 'f'.repeat(24)), signed)).statusCode).toBe(401);
    expect((await post(path, body, {})).statusCode).toBe(401);
    const secret = Object.values(JSON.parse(hook?.secret as string) as Record<string, string>)[0] as string;
    const old = String(Date.now() - 6 * 60_000);
    const stale = await post(path, body, {
      'x-webflow-timestamp': old,
      'x-webflow-signature': sign(secret, old, body),
    });
    expect(stale.statusCode).toBe(400);
    expect(stale.json().response.userFacingMessage).toBe('This webhook delivery is too old to be taken.');
    const guessed = await post(`/webhooks/webflow/${connection.id}/${'A'.repeat(32)}`, body, signed);
    expect(guessed.statusCode).toBe(404);
    expect(await queuedRuns(core.id)).toBe(0);

    // A new delivery signed with one of the webhooks' secrets: taken.
    const fresh = await post(path, body, {
      'x-webflow-timestamp': now,
      'x-webflow-signature': sign(secret, now, body),
    });
    expect(fresh.json()).toMatchObject({ received: true, queued: 1, duplicates: 0 });

    // A collection no sync of the connection reads wakes nothing.
    await clearRuns(core.id);
    await sql`delete from external_table where remote_id = ${sim.crm?.collections.companies as string}`.execute(
      t.ctx.db,
    );
    sim.create(sim.crm?.collections.companies as string, { name: 'New Co', slug: 'new-co' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({
      triggerType: 'collection_item_created',
      status: 200,
    });
    expect(await queuedRuns(core.id)).toBe(0);

    // Deleted in Webflow: made again at the next check; the others are kept.
    const [gone, ...rest] = hook?.id.split(',') ?? [];
    const removed = await fetch(`${sim.url}/v2/webhooks/${gone}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${sim.token}` },
    });
    expect(removed.status).toBe(204);
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const again = (await hooksOf(connection.id))[sim.siteId];
    expect(again?.id.split(',')).toEqual(expect.arrayContaining(rest));
    expect(again?.id.split(',')).not.toContain(gone);
    expect(sim.webhooks.forSite(sim.siteId).filter((w) => w.url === hook?.notificationUrl)).toHaveLength(4);
    sim.remove(contacts, itemId);
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({
      triggerType: 'collection_item_deleted',
      status: 200,
    });
    expect(await queuedRuns(core.id)).toBe(1);
  });

  it("signed in with Webflow: the webhooks are signed with the app's client secret", async () => {
    const contacts = sim.crm?.collections.contacts as string;
    const { connection, core } = await syncOf({ accessToken: OAUTH_TOKEN });
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const hook = (await hooksOf(connection.id))[sim.siteId];
    expect(hook?.secret).toBeUndefined();
    expect(hook?.id.split(',')).toHaveLength(4);
    sim.create(contacts, { name: 'Made in Webflow', slug: 'made-in-webflow', email: 'made@example.com' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.filter((d) => d.url === hook?.notificationUrl).at(-1);
    expect(delivery).toMatchObject({ triggerType: 'collection_item_created', status: 200 });
    expect(delivery?.signature).toBe(
      sign(app.clientSecret, delivery?.timestamp as string, delivery?.body as string),
    );
    expect(await queuedRuns(core.id)).toBe(1);
    // Another key does not do.
    const now = String(Date.now());
    const body = delivery?.body as string;
    const forged = await post(new URL(hook?.notificationUrl as string).pathname, body, {
      'x-webflow-timestamp': now,
      'x-webflow-signature': sign('not-the-client-secret', now, body),
    });
    expect(forged.statusCode).toBe(401);
  });
});
