import { AFFINITY_WEBHOOK_EVENTS } from '@lockstep/connectors/affinity';
import { type AffinitySimulator, startAffinitySimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { ensureAppWebhooks, type SealedWebhooks } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

// Affinity's webhooks for a sync, against the simulator's v1 webhook API: one subscription made by
// API (Affinity checks the address with a POST that must answer 2xx), whose events go into the real
// route and queue a run of the sync reading the table they are about. Affinity signs nothing: the
// address is the only proof, so a guessed one is 404; a repeated delivery queues nothing; a
// subscription deleted in Affinity is made again; with three others, Affinity's cap is reported.
let t: TestApp;
let sim: AffinitySimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

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

beforeAll(async () => {
  sim = await startAffinitySimulator({ rateLimit: false, webhooks: { fetch: deliver } });
  t = await createTestApp({ LOCKSTEP_AFFINITY_API_URL: sim.url }, { runWorkers: false });
  user = await signUp(t.app, 'affinity-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Affinity webhooks', () => {
  it('makes one subscription once, queues a run per event about a synced table, refuses guessed addresses and repeats, and makes a deleted one again', async () => {
    const tenantId = String(sim.state.tenant.id);
    const connection = await api('POST', '/rest/external-connections', {
      type: 'affinity',
      connectionItems: { apiKey: sim.token },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Affinity webhooks' });
    await api('POST', '/rest/external-bases', {
      type: 'affinity',
      name: 'Affinity',
      remoteId: tenantId,
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();
    const pipeline = sim.seed?.lists.pipeline as number;
    // The sync reads persons and the Deal Pipeline list only.
    await sql`delete from external_table where remote_id not in ('persons', ${`list-${pipeline}`})
      and external_base_id in (select id from external_base where external_connection_id = ${connection.id}::uuid)`.execute(
      t.ctx.db,
    );

    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const hook = (await hooksOf(connection.id))[tenantId];
    expect(hook?.notificationUrl).toMatch(
      new RegExp(`/webhooks/affinity/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    const subscriptions = () =>
      [...sim.state.webhooks.values()].map((w) => ({
        id: String(w.id),
        url: w.webhookUrl,
        events: [...w.subscriptions].sort(),
        disabled: w.disabled,
      }));
    expect(subscriptions()).toEqual([
      {
        id: hook?.id,
        url: hook?.notificationUrl,
        events: [...AFFINITY_WEBHOOK_EVENTS].sort(),
        disabled: false,
      },
    ]);
    // Affinity checked the address when subscribing, and the route answered it.
    expect(sim.requestLog.count({ method: 'POST', path: '/webhook/subscribe', status: 200 })).toBe(1);
    // Made once: the next refresh finds it and makes nothing.
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    expect(sim.requestLog.count({ method: 'POST', path: '/webhook/subscribe' })).toBe(1);
    expect((await hooksOf(connection.id))[tenantId]).toEqual(hook);

    // A person is edited in Affinity: the event arrives and the sync is queued.
    const personId = sim.seed?.persons[0] as number;
    sim.update('person', personId, { first_name: 'Edited' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.at(-1);
    expect(delivery?.type).toBe('person.updated');
    expect(delivery?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);

    // The same delivery again (Affinity's retry): taken once.
    await clearRuns(core.id);
    const path = new URL(hook?.notificationUrl as string).pathname;
    const post = (body: string, url = path) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body });
    const repeated = await post(delivery?.body as string);
    expect(repeated.statusCode).toBe(200);
    expect(repeated.json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });
    expect(await queuedRuns(core.id)).toBe(0);

    // A new event (sent a second later) at a guessed address, or for another connection's id: 404, nothing queued.
    const event = JSON.stringify({
      ...JSON.parse(delivery?.body as string),
      sent_at: Math.floor(Date.now() / 1000) + 1,
    });
    const guessed = await post(event, `/webhooks/affinity/${connection.id}/${'A'.repeat(32)}`);
    expect(guessed.statusCode).toBe(404);
    expect(guessed.json()).toMatchObject({ statusCode: 404, response: { code: 'not_found' } });
    const key = path.split('/').at(-1);
    expect((await post(event, `/webhooks/affinity/${crypto.randomUUID()}/${key}`)).statusCode).toBe(404);
    expect((await post(event, `/webhooks/pipedrive/${connection.id}/${key}`)).statusCode).toBe(404);
    expect(await queuedRuns(core.id)).toBe(0);
    // At the address: taken.
    expect((await post(event)).json()).toMatchObject({ received: true, queued: 1, duplicates: 0 });
    expect(await queuedRuns(core.id)).toBe(1);

    // A company edit: the sync reads no companies but a list, whose entries may show the company.
    await clearRuns(core.id);
    sim.update('organization', sim.seed?.organizations[0] as number, { name: 'Renamed In Affinity' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({ type: 'organization.updated', status: 200 });
    expect(await queuedRuns(core.id)).toBe(1);
    // An entry added to another list, which no sync of the connection reads, wakes nothing.
    await clearRuns(core.id);
    const founders = sim.seed?.lists.founders as number;
    sim.create('listEntry', { list_id: founders, entity_id: sim.seed?.persons[20] as number });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({ type: 'list_entry.created', status: 200 });
    expect(await queuedRuns(core.id)).toBe(0);

    // The subscription deleted in Affinity: made again (checked again), and events flow again.
    const removed = await fetch(`${sim.url}/webhook/${hook?.id}`, {
      method: 'DELETE',
      headers: { authorization: `Basic ${Buffer.from(`:${sim.token}`).toString('base64')}` },
    });
    expect(removed.status).toBe(200);
    expect(sim.state.webhooks.size).toBe(0);
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const again = (await hooksOf(connection.id))[tenantId];
    expect(again?.id).not.toBe(hook?.id);
    expect(again?.notificationUrl).toBe(hook?.notificationUrl);
    expect(subscriptions().map((w) => w.id)).toEqual([again?.id]);
    expect(sim.requestLog.count({ method: 'POST', path: '/webhook/subscribe' })).toBe(2);
    sim.update('person', personId, { last_name: 'Again' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)).toMatchObject({ type: 'person.updated', status: 200 });
    expect(await queuedRuns(core.id)).toBe(1);

    // Deleted again while the account has three subscriptions of other tools: a clear refusal.
    sim.state.webhooks.clear();
    for (const n of [1, 2, 3])
      sim.state.createWebhook(`https://example.com/other-${n}`, [], sim.state.owner.id);
    const problems = await ensureAppWebhooks(t.ctx, core.id);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`${tenantId}: Affinity allows 3 webhook subscriptions per account`);
    expect(sim.state.webhooks.size).toBe(3);
    expect(sim.requestLog.count({ method: 'POST', path: '/webhook/subscribe' })).toBe(2);
  });
});
