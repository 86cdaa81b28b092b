import { type AirtableSimulator, startAirtableSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { ensureAppWebhooks, type SealedWebhooks } from '../../services/app-webhooks';
import { openSecrets } from '../../services/external-connections';

// Airtable webhooks for a sync, against the simulator's webhook API: made for the base, its
// notification pings (MAC-signed) delivered into the real route queue a run of the sync; a bad
// MAC queues nothing; a webhook close to expiry is refreshed, one Airtable lost is made again.
let t: TestApp;
let sim: AirtableSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };

// The simulator's pings go straight into the app (no port to listen on in tests).
const deliver: typeof fetch = (input, init) => injectAsFetch(t.app)(input, init);

/** REST calls as the signed-in user (set in beforeAll). */
const api: Api = (method, url, payload) => apiAs(t.app, user.auth)(method, url, payload);

async function queuedRuns(coreBaseId: string) {
  const rows = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
     where name = 'sync-run' and data->>'coreBaseId' = ${coreBaseId} and data->>'trigger' = 'webhook'`.execute(
    t.ctx.db,
  );
  return rows.rows[0]?.n ?? 0;
}

async function hooksOf(connectionId: string) {
  const row = await t.ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return (openSecrets(t.ctx, row) as ReturnType<typeof openSecrets> & SealedWebhooks).appWebhooks ?? {};
}

beforeAll(async () => {
  sim = await startAirtableSimulator({ seed: { contacts: 5 }, fetch: deliver });
  t = await createTestApp({}, { runWorkers: false });
  user = await signUp(t.app, 'airtable-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t.close();
  await sim.close();
});

describe('Airtable webhooks', () => {
  it('makes the webhook, queues a run on each signed ping, refreshes it, and makes it again when lost', async () => {
    const baseId = sim.crm?.baseId as string;
    const connection = await api('POST', '/rest/external-connections', {
      type: 'airtable',
      connectionItems: { apiKey: sim.token, baseUrl: sim.url },
    });
    const core = await api('POST', '/rest/core-bases', { name: 'Airtable webhooks' });
    await api('POST', '/rest/external-bases', {
      type: 'airtable',
      name: 'CRM',
      remoteId: baseId,
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();

    const first = await ensureAppWebhooks(t.ctx, core.id);
    expect(first, JSON.stringify(sim.requestLog.entries)).toEqual([]);
    const hook = (await hooksOf(connection.id))[baseId];
    expect(hook?.notificationUrl).toMatch(
      new RegExp(`/webhooks/airtable/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    const listed = await (
      await fetch(`${sim.url}/v0/bases/${baseId}/webhooks`, {
        headers: { authorization: `Bearer ${sim.token}` },
      })
    ).json();
    expect(listed.webhooks.map((w: { id: string }) => w.id)).toEqual([hook?.id]);

    // A person edits a record in Airtable: the ping arrives, signed, and the sync is queued.
    const contact = sim.crm?.contactIds[0] as string;
    sim.mutateRecord(baseId, 'Contacts', contact, { Notes: 'Edited in Airtable' });
    for (let i = 0; i < 100 && (await queuedRuns(core.id)) === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await queuedRuns(core.id)).toBe(1);

    // A ping with a MAC that is not the webhook's is refused and queues nothing.
    const path = new URL(hook?.notificationUrl as string).pathname;
    const forged = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { ...json, 'x-airtable-content-mac': `hmac-sha256=${'0'.repeat(64)}` },
      payload: JSON.stringify({
        base: { id: baseId },
        webhook: { id: hook?.id },
        timestamp: new Date().toISOString(),
      }),
    });
    expect(forged.statusCode).toBe(401);
    expect(await queuedRuns(core.id)).toBe(1);

    // Close to its expiry: refreshed, same webhook, a week ahead again.
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const sealRow = async (next: Record<string, unknown>) => {
      const row = await t.ctx.db
        .selectFrom('external_connection')
        .selectAll()
        .where('id', '=', connection.id)
        .executeTakeFirstOrThrow();
      const sealed = openSecrets(t.ctx, row) as ReturnType<typeof openSecrets> & SealedWebhooks;
      await t.ctx.db
        .updateTable('external_connection')
        .set({
          secrets: t.ctx.secretBox.seal({ ...sealed, appWebhooks: { [baseId]: { ...hook, ...next } } }),
        })
        .where('id', '=', connection.id)
        .execute();
    };
    await sealRow({ expirationTime: soon });
    const refreshes = sim.requestLog.count({ method: 'POST', path: /\/refresh$/ });
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    expect(sim.requestLog.count({ method: 'POST', path: /\/refresh$/ })).toBe(refreshes + 1);
    const refreshed = (await hooksOf(connection.id))[baseId];
    expect(refreshed?.id).toBe(hook?.id);
    expect(Date.parse(refreshed?.expirationTime as string)).toBeGreaterThan(Date.now() + 6 * 86_400_000);

    // Deleted in Airtable meanwhile: made again.
    await fetch(`${sim.url}/v0/bases/${baseId}/webhooks/${hook?.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${sim.token}` },
    });
    await sealRow({ expirationTime: soon });
    // The test's own calls above are not paced by Lockstep's limiter: let Airtable's second pass.
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await ensureAppWebhooks(t.ctx, core.id)).toEqual([]);
    const again = (await hooksOf(connection.id))[baseId];
    expect(again?.id).not.toBe(hook?.id);
  });
});
