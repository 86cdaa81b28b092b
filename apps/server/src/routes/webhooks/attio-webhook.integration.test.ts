import { createHmac } from 'node:crypto';
import { type AttioSimulator, startAttioSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { ensureAppWebhooks, type SealedWebhooks } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

// Attio's webhook for a sync, against the simulator's webhook API: made once by API for the
// workspace (record events), its deliveries (one event per POST, Attio-Signature = hex HMAC-SHA256
// of the body with the webhook's secret) go into the real route and queue a run of the sync reading
// the object; a forged or unsigned delivery, a repeated message or a wrong address queue nothing; a
// webhook deleted in Attio is made again.
let t: TestApp;
let sim: AttioSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
// Attio only sends to https addresses: the server's public URL is one (deliveries go in process).
const PUBLIC_URL = 'https://lockstep.test';
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

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
  sim = await startAttioSimulator({ idSeed: 21, rateLimit: false, webhooks: { fetch: deliver } });
  t = await createTestApp(
    { LOCKSTEP_ATTIO_API_URL: sim.url, LOCKSTEP_PUBLIC_URL: PUBLIC_URL },
    { runWorkers: false },
  );
  user = await signUp(t.app, 'attio-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Attio webhooks', () => {
  it('makes the webhook once, queues a run per signed message about a synced object, refuses forgeries, and makes it again when deleted', async () => {
    const workspaceId = sim.state.workspace.id;
    const connection = await api('POST', '/rest/external-connections', {
      type: 'attio',
      connectionItems: { apiKey: sim.token },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Attio webhooks' });
    await api('POST', '/rest/external-bases', {
      type: 'attio',
      name: 'Attio',
      remoteId: workspaceId,
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();

    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const hook = (await hooksOf(connection.id))[workspaceId];
    expect(hook?.notificationUrl).toMatch(
      new RegExp(`^${PUBLIC_URL}/webhooks/attio/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    expect([...sim.state.webhooks.values()].map((w) => [w.id, w.target_url, w.secret])).toEqual([
      [hook?.id, hook?.notificationUrl, hook?.secret],
    ]);
    // Made once: the next refresh finds it and makes nothing.
    const creates = sim.requestLog.count({ method: 'POST', path: '/v2/webhooks' });
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    expect(sim.requestLog.count({ method: 'POST', path: '/v2/webhooks' })).toBe(creates);
    expect(sim.state.webhooks.size).toBe(1);

    // A person is edited in Attio: the signed delivery is taken and the sync is queued.
    const personId = sim.seed?.people[0] as string;
    sim.update('people', personId, { job_title: 'Edited in Attio' });
    await sim.flushWebhooks();
    const delivery = sim.webhooks.deliveries.at(-1);
    expect(JSON.parse(delivery?.body as string).events[0]).toMatchObject({
      event_type: 'record.updated',
      id: { record_id: personId },
    });
    expect(delivery?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);

    // The same message again (Attio's retry: same body, signature and Idempotency-Key): taken once.
    await clearRuns(core.id);
    const path = new URL(hook?.notificationUrl as string).pathname;
    const post = (body: string, headers: Record<string, string>, url = path) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...headers },
        payload: body,
      });
    const body = delivery?.body as string;
    const retried = await post(body, {
      'attio-signature': delivery?.signature as string,
      'idempotency-key': delivery?.idempotencyKey as string,
    });
    expect(retried.json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });
    expect(await queuedRuns(core.id)).toBe(0);

    // Forged (signed with another secret), unsigned, or at a guessed address: refused, nothing queued.
    const forged = await post(body, {
      'attio-signature': sign('not-the-secret', body),
      'idempotency-key': 'k-forged',
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    expect((await post(body, { 'idempotency-key': 'k-unsigned' })).statusCode).toBe(401);
    const tampered = body.replace(personId, sim.seed?.people[1] as string);
    expect(
      (
        await post(tampered, {
          'attio-signature': delivery?.signature as string,
          'idempotency-key': 'k-tampered',
        })
      ).statusCode,
    ).toBe(401);
    const guessed = await post(
      body,
      { 'attio-signature': delivery?.signature as string, 'idempotency-key': 'k-guessed' },
      `/webhooks/attio/${connection.id}/${'A'.repeat(32)}`,
    );
    expect(guessed.statusCode).toBe(404);
    expect(guessed.json()).toMatchObject({ statusCode: 404, response: { code: 'not_found' } });
    expect(await queuedRuns(core.id)).toBe(0);

    // A new message (another key), signed: taken.
    const fresh = await post(body, {
      'attio-signature': sign(hook?.secret as string, body),
      'idempotency-key': 'k-new',
    });
    expect(fresh.json()).toMatchObject({ received: true, queued: 1, duplicates: 0 });
    expect(await queuedRuns(core.id)).toBe(1);

    // An object no sync of the connection reads wakes nothing.
    await clearRuns(core.id);
    await sql`delete from external_table where remote_id = 'projects'`.execute(t.ctx.db);
    sim.update('projects', sim.seed?.projects[0] as string, { name: 'Renamed in Attio' });
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(0);

    // Deleted in Attio: made again, with a new secret; the old one signs nothing any more.
    const removed = await fetch(`${sim.url}/v2/webhooks/${hook?.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${sim.token}` },
    });
    expect(removed.status).toBe(200);
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const again = (await hooksOf(connection.id))[workspaceId];
    expect(again?.id).not.toBe(hook?.id);
    expect(again?.notificationUrl).toBe(hook?.notificationUrl);
    expect([...sim.state.webhooks.keys()]).toEqual([again?.id]);
    const old = await post(body, {
      'attio-signature': sign(hook?.secret as string, body),
      'idempotency-key': 'k-old',
    });
    expect(old.statusCode).toBe(401);
    sim.remove('people', personId);
    await sim.flushWebhooks();
    expect(sim.webhooks.deliveries.at(-1)?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);
  });
});
