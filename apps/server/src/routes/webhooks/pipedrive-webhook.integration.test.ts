import { type PipedriveSimulator, startPipedriveSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { ensureAppWebhooks, type SealedWebhooks } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

// Pipedrive's webhooks for a sync, against the simulator's webhook API: made once by API, one v2
// webhook per synced object with HTTP Basic credentials (Pipedrive signs nothing); their events go
// into the real route and queue a run of the sync reading the entity's table; wrong or missing
// credentials, a repeated event or a wrong address queue nothing; a webhook deleted in Pipedrive is
// made again.
let t: TestApp;
let sim: PipedriveSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

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
  sim = await startPipedriveSimulator({ rateLimit: false, webhooks: { fetch: deliver } });
  t = await createTestApp({ LOCKSTEP_PIPEDRIVE_API_URL: sim.url }, { runWorkers: false });
  user = await signUp(t.app, 'pipedrive-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Pipedrive webhooks', () => {
  it('makes a webhook per object once, queues a run per authenticated event about a synced table, refuses the rest, and makes a deleted one again', async () => {
    const companyId = String(sim.state.companyId);
    const connection = await api('POST', '/rest/external-connections', {
      type: 'pipedrive',
      connectionItems: { apiToken: sim.token },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Pipedrive webhooks' });
    await api('POST', '/rest/external-bases', {
      type: 'pipedrive',
      name: 'Pipedrive',
      remoteId: companyId,
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();

    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const hook = (await hooksOf(connection.id))[companyId];
    expect(hook?.notificationUrl).toMatch(
      new RegExp(`/webhooks/pipedrive/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    const active = () =>
      sim.webhooks.active().map((w) => ({
        id: String(w.id),
        url: w.subscription_url,
        object: w.event_object,
        action: w.event_action,
        version: w.version,
        user: w.http_auth_user,
        password: w.http_auth_password,
      }));
    const made = {
      url: hook?.notificationUrl,
      action: '*',
      version: '2.0',
      user: 'lockstep',
      password: hook?.secret,
    };
    expect(active()).toEqual([
      { ...made, id: expect.any(String), object: 'person' },
      { ...made, id: expect.any(String), object: 'organization' },
      { ...made, id: expect.any(String), object: 'deal' },
    ]);
    expect(hook?.id).toBe(
      active()
        .map((w) => w.id)
        .join(','),
    );
    // Made once: the next refresh finds them and makes nothing.
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    expect(sim.requestLog.count({ method: 'POST', path: '/api/v1/webhooks' })).toBe(3);
    expect((await hooksOf(connection.id))[companyId]).toEqual(hook);

    // A person is edited in Pipedrive: the event arrives with the credentials and the sync is queued.
    const personId = sim.crm?.persons[0] as number;
    sim.update('persons', personId, { name: 'Edited In Pipedrive' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.at(-1);
    expect(delivery?.payload.meta).toMatchObject({
      entity: 'person',
      action: 'change',
      change_source: 'app',
    });
    expect(delivery?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);

    // The same event again (Pipedrive's retry: same meta.id, next attempt): taken once.
    await clearRuns(core.id);
    const path = new URL(hook?.notificationUrl as string).pathname;
    const post = (body: string, headers: Record<string, string>, url = path) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...headers },
        payload: body,
      });
    const retry = JSON.stringify({ ...delivery?.payload, meta: { ...delivery?.payload.meta, attempt: 2 } });
    const retried = await post(retry, { authorization: delivery?.authorization as string });
    expect(retried.json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });
    expect(await queuedRuns(core.id)).toBe(0);

    // A new event: wrong password, another user, no credentials, or a guessed address: refused.
    const event = JSON.stringify({
      ...delivery?.payload,
      meta: { ...delivery?.payload.meta, id: 'a-new-event' },
    });
    const wrong = await post(event, { authorization: basic('lockstep', 'not-the-password') });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    expect((await post(event, { authorization: basic('admin', hook?.secret as string) })).statusCode).toBe(
      401,
    );
    expect((await post(event, {})).statusCode).toBe(401);
    const guessed = await post(
      event,
      { authorization: delivery?.authorization as string },
      `/webhooks/pipedrive/${connection.id}/${'A'.repeat(32)}`,
    );
    expect(guessed.statusCode).toBe(404);
    expect(guessed.json()).toMatchObject({ statusCode: 404, response: { code: 'not_found' } });
    expect(await queuedRuns(core.id)).toBe(0);
    // With the credentials: taken.
    expect((await post(event, { authorization: delivery?.authorization as string })).json()).toMatchObject({
      received: true,
      queued: 1,
      duplicates: 0,
    });
    expect(await queuedRuns(core.id)).toBe(1);

    // An entity whose table no sync of the connection reads wakes nothing.
    await clearRuns(core.id);
    await sql`delete from external_table where remote_id = 'deals'`.execute(t.ctx.db);
    sim.update('deals', sim.crm?.deals[0] as number, { title: 'Renamed in Pipedrive' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)?.payload.meta).toMatchObject({ entity: 'deal' });
    expect(sim.webhooks.deliveries.at(-1)?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(0);

    // The organizations webhook deleted in Pipedrive: made again; the others are kept.
    const [personHook, organizationHook, dealHook] = String(hook?.id).split(',');
    const removed = await fetch(`${sim.url}/api/v1/webhooks/${organizationHook}`, {
      method: 'DELETE',
      headers: { 'x-api-token': sim.token },
    });
    expect(removed.status).toBe(200);
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const again = (await hooksOf(connection.id))[companyId];
    const [p2, o2, d2] = String(again?.id).split(',');
    expect([p2, d2]).toEqual([personHook, dealHook]);
    expect(o2).not.toBe(organizationHook);
    expect(active().map((w) => w.object)).toEqual(['person', 'deal', 'organization']);
    sim.update('organizations', sim.crm?.organizations[0] as number, { name: 'Renamed Org' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)?.payload.meta).toMatchObject({ entity: 'organization' });
    expect(sim.webhooks.deliveries.at(-1)?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);
  });
});
