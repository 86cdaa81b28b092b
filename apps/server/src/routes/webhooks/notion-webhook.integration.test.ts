import { type NotionSimulator, startNotionSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';

// Notion's webhooks for a connection, delivered by the simulator (subscription handshake, signed
// events) to the real route: a change to a synced data source queues a run of its sync at once; a
// bad signature, a stale event or a wrong address queues nothing.
let t: TestApp;
let sim: NotionSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };

// The simulator's deliveries go straight into the app (no port to listen on in tests).
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);

/** REST calls as the signed-in user (set in beforeAll). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

/** Runs of the sync the queue holds, by trigger. */
async function queuedRuns(coreBaseId: string, trigger: string) {
  const rows = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
     where name = 'sync-run' and data->>'coreBaseId' = ${coreBaseId} and data->>'trigger' = ${trigger}`.execute(
    t.ctx.db,
  );
  return rows.rows[0]?.n ?? 0;
}

beforeAll(async () => {
  sim = await startNotionSimulator({ fetch: deliver, autoDeliverWebhooks: false });
  t = await createTestApp({}, { runWorkers: false });
  user = await signUp(t.app, 'notion-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t.close();
  await sim.close();
});

describe('Notion webhooks', () => {
  it('keeps the handshake, then queues a run for each signed change to a synced data source', async () => {
    const connection = await api('POST', '/rest/external-connections', {
      type: 'notion',
      connectionItems: { internalToken: sim.token, baseUrl: sim.url },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Notion webhooks' });
    const attached = await api('POST', '/rest/external-bases', {
      type: 'notion',
      name: 'People',
      remoteId: sim.workspace?.peopleDatabaseId,
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    const base = attached.leftExternalBase;
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();

    const debug = await api('GET', `/rest/external-bases/${base.id}/webhooks/debug`);
    expect(debug.webhookUrl).toMatch(new RegExp(`/webhooks/notion/${connection.id}/[A-Za-z0-9_-]{32}$`));

    // Without the owner starting the setup, a handshake is refused (anyone may hold the address).
    const path = new URL(debug.webhookUrl).pathname;
    const early = await t.app.inject({
      method: 'POST',
      url: path,
      headers: json,
      payload: JSON.stringify({ verification_token: 'secret_not_the_owners' }),
    });
    expect(early.statusCode).toBe(409);
    expect(early.json().response.userFacingMessage).toMatch(/Connect Notion webhooks/);

    // As in Notion's settings: the owner starts the setup in Lockstep, the subscription is created
    // (the handshake arrives), then verified.
    const expecting = await api(
      'POST',
      `/rest/external-connections/${connection.id}/notion-webhook/expect-handshake`,
    );
    expect(expecting.webhookUrl).toBe(debug.webhookUrl);
    const sub = await sim.webhooks.subscribe({ url: debug.webhookUrl });
    sim.webhooks.verify(sub.id, sub.verificationToken);

    const person = sim.state.listPages(sim.workspace?.peopleDataSourceId as string)[0];
    sim.editPage(person?.id as string, { Name: 'Edited in Notion' });
    await sim.webhooks.flush();
    expect(sub.deliveries.at(-1)).toMatchObject({ type: 'page.properties_updated', status: 200 });
    expect(await queuedRuns(core.id, 'webhook')).toBe(1);

    // The handshake is spent: a later token (a takeover attempt) is refused, the owner's kept.
    const takeover = await t.app.inject({
      method: 'POST',
      url: path,
      headers: json,
      payload: JSON.stringify({ verification_token: 'secret_of_someone_else' }),
    });
    expect(takeover.statusCode).toBe(409);

    // The same signed event delivered again (a retry, a replay within the window) is taken once.
    const again = JSON.stringify({
      id: 'evt-once',
      type: 'page.properties_updated',
      timestamp: new Date().toISOString(),
      entity: { id: person?.id, type: 'page' },
      data: { parent: { data_source_id: sim.workspace?.peopleDataSourceId } },
    });
    const deliverAgain = () =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { ...json, 'x-notion-signature': sim.state.sign(sub, again) },
        payload: again,
      });
    expect((await deliverAgain()).json()).toMatchObject({ received: true, queued: 1 });
    expect((await deliverAgain()).json()).toMatchObject({ received: true, queued: 0, duplicate: true });
    expect((await deliverAgain()).json()).toMatchObject({ queued: 0, duplicate: true });

    // A forged event (wrong signature) is refused and queues nothing.
    const forged = JSON.stringify({
      id: 'e1',
      type: 'page.properties_updated',
      timestamp: new Date().toISOString(),
      entity: { id: person?.id, type: 'page' },
      data: { parent: { data_source_id: sim.workspace?.peopleDataSourceId } },
    });
    const bad = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { ...json, 'x-notion-signature': `sha256=${'0'.repeat(64)}` },
      payload: forged,
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });

    // A replay of a delivery captured long ago is refused.
    const delivered = sub.deliveries.length;
    const old = JSON.stringify({
      ...JSON.parse(forged),
      timestamp: new Date(Date.now() - 3_600_000).toISOString(),
    });
    const stale = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { ...json, 'x-notion-signature': sim.state.sign(sub, old) },
      payload: old,
    });
    expect(stale.statusCode).toBe(400);
    expect(delivered).toBe(sub.deliveries.length);

    // An address with another key does not exist.
    const wrong = await t.app.inject({
      method: 'POST',
      url: path.replace(/[A-Za-z0-9_-]{32}$/, 'x'.repeat(32)),
      headers: json,
      payload: forged,
    });
    expect(wrong.statusCode).toBe(404);
  });
});
