import { type MemberstackSimulator, startMemberstackSimulator } from '@lockstep/simulators';
import { sql } from 'kysely';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, injectAsFetch, signUp, type TestApp } from '../../../test/test-app';
import { appWebhookPath } from '../../services/app-webhooks';

// Memberstack's webhooks for a sync, from the simulator's Svix sender: the user adds an endpoint in
// the dashboard with the address Lockstep shows on the base and pastes its signing secret on the
// connection. Signed deliveries go into the real route and queue a run of the syncs reading
// members; a forged, unsigned, tampered or repeated one, or a wrong address, queues nothing.
let t: TestApp;
let sim: MemberstackSimulator;
let user: Awaited<ReturnType<typeof signUp>>;
const PUBLIC_URL = 'https://lockstep.test';
const SECRET = `whsec_${Buffer.from('the endpoint signing secret 0001').toString('base64')}`;
/** The endpoint's address as entered in the dashboard (known once the connection exists). */
let endpoint = `${PUBLIC_URL}/not-set-yet`;
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

beforeAll(async () => {
  sim = await startMemberstackSimulator({
    idSeed: 31,
    rateLimit: false,
    // Svix posts to the endpoint's address: here, into the app in process.
    webhooks: {
      url: `${PUBLIC_URL}/endpoint`,
      secret: SECRET,
      fetch: (_u, init) => injectAsFetch(t.app)(endpoint, init),
    },
  });
  t = await createTestApp(
    { LOCKSTEP_MEMBERSTACK_API_URL: sim.url, LOCKSTEP_PUBLIC_URL: PUBLIC_URL },
    { runWorkers: false },
  );
  user = await signUp(t.app, 'memberstack-webhook@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('Memberstack webhooks', () => {
  it('queues a run per signed delivery about members, refuses forgeries and repeats, and needs the signing secret', async () => {
    const connection = await api('POST', '/rest/external-connections', {
      type: 'memberstack',
      connectionItems: { secretKey: sim.token, webhookSecret: SECRET },
    });
    // Secrets are never shown; the key's mode is.
    expect(connection.connectionItems).toEqual({ mode: 'test' });
    const core = await api('POST', '/rest/core-bases', { name: 'Memberstack webhooks' });
    const full = await api('POST', '/rest/external-bases', {
      type: 'memberstack',
      name: 'Memberstack',
      remoteId: 'test',
      coreBaseId: core.id,
      externalConnectionId: connection.id,
      side: 'left',
    });
    await t.ctx.db.updateTable('core_base').set({ sync_state: 'on' }).where('id', '=', core.id).execute();
    const debug = (
      await t.app.inject({
        url: `/rest/external-bases/${full.leftExternalBase.id}/webhooks/debug`,
        headers: user.auth,
      })
    ).json();
    expect(debug.webhookUrl).toMatch(
      new RegExp(`^${PUBLIC_URL}/webhooks/memberstack/${connection.id}/[A-Za-z0-9_-]{32}$`),
    );
    endpoint = debug.webhookUrl;

    // A member edited in Memberstack: the signed delivery is taken and the sync is queued.
    const memberId = sim.seeded?.members[0] as string;
    sim.update(memberId, { customFields: { company: 'Edited in Memberstack' } });
    await sim.flushWebhooks();
    const delivery = sim.webhooks?.deliveries.at(-1);
    expect(JSON.parse(delivery?.message.body as string)).toMatchObject({
      event: 'member.updated',
      payload: { id: memberId },
    });
    expect(delivery?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(1);

    // The same message again (Svix's retry: same id and signature): taken once.
    await clearRuns(core.id);
    const path = new URL(endpoint).pathname;
    const body = delivery?.message.body as string;
    const signed = {
      'svix-id': delivery?.message.id as string,
      'svix-timestamp': delivery?.timestamp as string,
      'svix-signature': delivery?.signature as string,
    };
    const post = (payload: string, headers: Record<string, string>, url = path) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...headers },
        payload,
      });
    expect((await post(body, signed)).json()).toMatchObject({ received: true, queued: 0, duplicates: 1 });
    expect(await queuedRuns(core.id)).toBe(0);

    // Forged (another secret), unsigned, tampered, or at a guessed address: refused, nothing queued.
    const now = new Date();
    const other = new Webhook(`whsec_${Buffer.from('not the endpoint signing secret!').toString('base64')}`);
    const forged = await post(body, {
      ...signed,
      'svix-id': 'msg_forged',
      'svix-signature': other.sign('msg_forged', now, body),
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ statusCode: 401, response: { code: 'auth_invalid' } });
    expect((await post(body, { 'svix-id': 'msg_unsigned' })).statusCode).toBe(401);
    const tampered = body.replace(memberId, sim.seeded?.members[1] as string);
    expect((await post(tampered, signed)).statusCode).toBe(401);
    const guessed = await post(body, signed, `/webhooks/memberstack/${connection.id}/${'A'.repeat(32)}`);
    expect(guessed.statusCode).toBe(404);
    expect(await queuedRuns(core.id)).toBe(0);

    // A new message, signed with the endpoint's secret: taken (a plan event wakes members and plans).
    sim.addPlan(memberId, 'pln_newsletter-b3n8r1t6');
    await sim.flushWebhooks();
    expect(sim.webhooks?.deliveries.at(-1)).toMatchObject({
      message: { event: 'member.plan.added' },
      status: 200,
    });
    expect(await queuedRuns(core.id)).toBe(1);

    // No sync reads members any more: a delivery wakes nothing.
    await clearRuns(core.id);
    await sql`delete from external_table where remote_id in ('members', 'plans')`.execute(t.ctx.db);
    sim.remove(sim.seeded?.members[2] as string);
    await sim.flushWebhooks();
    expect(sim.webhooks?.deliveries.at(-1)?.status).toBe(200);
    expect(await queuedRuns(core.id)).toBe(0);

    // A connection without the signing secret cannot check its deliveries: it says what to add.
    const bare = await api('POST', '/rest/external-connections', {
      type: 'memberstack',
      connectionItems: { secretKey: sim.token },
    });
    const refused = await post(body, signed, appWebhookPath(t.ctx, 'memberstack', bare.id));
    expect(refused.statusCode).toBe(409);
    expect(refused.json().response.userFacingMessage).toMatch(/signing secret/);
  });
});
