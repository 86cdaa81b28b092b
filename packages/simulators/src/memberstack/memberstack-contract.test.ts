/**
 * Contract test: Memberstack's official Admin SDK (@memberstack/admin) against the simulator.
 * If the client cannot use the simulator, the simulator is wrong, not this test.
 *
 * The client takes the base URL as an init option: `memberstackAdmin.init(key, { baseUrl: sim.url })`
 * (lib/request.js appends paths such as `members?first=...` to it).
 *
 * The client rejects with the response body itself (`{ code, message }`), not with an HTTP error,
 * so it carries no status; where a status matters the test also reads it from the simulator's
 * request log (what a connector sees through its own fetch).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import memberstackAdmin from '@memberstack/admin';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_PLANS,
  INVALID_KEY_CODE,
  type MemberstackSimulator,
  NO_MEMBER_MESSAGE,
  RATE_LIMIT_MESSAGE,
  type StartMemberstackSimulatorOptions,
  startMemberstackSimulator,
} from './index.ts';

type Admin = ReturnType<typeof memberstackAdmin.init>;

const started: MemberstackSimulator[] = [];
const servers: Server[] = [];

async function start(
  options: StartMemberstackSimulatorOptions = {},
): Promise<{ sim: MemberstackSimulator; ms: Admin }> {
  const sim = await startMemberstackSimulator({
    rateLimit: false,
    idSeed: 3,
    clock: new ManualClock(),
    ...options,
  });
  started.push(sim);
  return { sim, ms: memberstackAdmin.init(sim.token, { baseUrl: sim.url }) };
}

afterEach(async () => {
  while (started.length) await started.pop()!.close();
  while (servers.length) {
    const s = servers.pop()!;
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** What the client rejects with: Memberstack's error body. */
async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to fail');
}

const lastStatus = (sim: MemberstackSimulator) => sim.requestLog.entries.at(-1)?.status;

const FREE = DEFAULT_PLANS.find((p) => p.free)!.id;
const PAID = DEFAULT_PLANS.find((p) => !p.free)!.id;

describe('@memberstack/admin against the simulator', () => {
  it('members.list pages with endCursor/hasNextPage to the end, in both orders', async () => {
    const { sim, ms } = await start();
    const seen: string[] = [];
    const cursors: number[] = [];
    let after: number | undefined;
    let pages = 0;
    do {
      const page = await ms.members.list({ limit: 15, ...(after !== undefined ? { after } : {}) });
      pages++;
      expect(page.totalCount).toBe(40);
      expect(typeof page.endCursor).toBe('number');
      for (const m of page.data) {
        expect(m.id).toMatch(/^mem_[a-z0-9]+$/);
        expect(m.auth.email).toMatch(/@/);
        expect(m).not.toHaveProperty('json');
        seen.push(m.id);
      }
      cursors.push(page.endCursor);
      after = page.hasNextPage ? page.endCursor : undefined;
    } while (after !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(sim.seeded!.members);
    expect(new Set(seen).size).toBe(40);
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    // The client sends the page size as `first`.
    expect(sim.requestLog.count({ method: 'GET', path: '/members' })).toBe(3);

    const desc = await ms.members.list({ limit: 100, order: 'DESC' });
    expect(desc.data.map((m) => m.id)).toEqual([...sim.seeded!.members].reverse());
    expect(desc.hasNextPage).toBe(false);
    const created = desc.data.map((m) => Date.parse(m.createdAt));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
  });

  it('members.list caps the page at 100 and the default is 50', async () => {
    const { ms } = await start({ seed: { members: 120 }, sandboxMemberLimit: false });
    const big = await ms.members.list({ limit: 500 });
    expect(big.data).toHaveLength(100);
    expect(big.hasNextPage).toBe(true);
    const rest = await ms.members.list({ limit: 500, after: big.endCursor });
    expect(rest.data).toHaveLength(20);
    expect(rest.hasNextPage).toBe(false);
    expect((await ms.members.list()).data).toHaveLength(50);
  });

  it('members.retrieve by id and by email; a miss resolves to { data: null }', async () => {
    const { sim, ms } = await start();
    const id = sim.seeded!.members[2]!;
    const { data } = await ms.members.retrieve({ id });
    expect(data.id).toBe(id);
    expect(data.customFields).toMatchObject({ 'first-name': 'Chloe', 'last-name': 'Moreau' });
    expect(data.json).toEqual({});
    const pro = data.planConnections.find((c) => typeof c !== 'string' && c.planId === PAID);
    expect(pro).toMatchObject({ planName: 'Pro', type: 'SUBSCRIPTION', active: true, status: 'ACTIVE' });
    expect(data.permissions).toContain('view:pro');

    const byEmail = await ms.members.retrieve({ email: data.auth.email.toUpperCase() });
    expect(byEmail.data.id).toBe(id);

    expect(await ms.members.retrieve({ id: 'mem_doesnotexist' })).toEqual({ data: null });
    expect(await ms.members.retrieve({ email: 'nobody@example.com' })).toEqual({ data: null });
    expect(lastStatus(sim)).toBe(200);
  });

  it('create -> update -> delete round-trip, as a sync writes', async () => {
    const { sim, ms } = await start();
    const { data: created } = await ms.members.create({
      email: 'New.Member@Example.com',
      password: 'correct-horse-battery',
      plans: [{ planId: FREE }],
      customFields: { 'first-name': 'Nia', company: 'Lockstep', 'not-a-field': 'dropped' },
      metaData: { source: 'lockstep' },
      json: { prefs: { theme: 'dark' } },
      loginRedirect: '/welcome',
    });
    expect(created.id).toMatch(/^mem_/);
    expect(created.auth.email).toBe('new.member@example.com');
    expect(created.customFields).toEqual({ 'first-name': 'Nia', company: 'Lockstep' });
    expect(created.metaData).toEqual({ source: 'lockstep' });
    expect(created.json).toEqual({ prefs: { theme: 'dark' } });
    expect(created.loginRedirect).toBe('/welcome');
    expect(created.verified).toBe(false);
    expect(Date.parse(created.createdAt)).toBe(sim.clock.now());
    expect(created.planConnections).toEqual([
      expect.objectContaining({ planId: FREE, type: 'FREE', status: 'ACTIVE', active: true, payment: null }),
    ]);
    expect((await ms.members.list({ limit: 1 })).totalCount).toBe(41);

    const { data: updated } = await ms.members.update({
      id: created.id,
      data: {
        customFields: { 'last-name': 'Okoro' },
        metaData: { crmId: '42' },
        json: { replaced: true },
        verified: true,
        email: 'nia@lockstep.dev',
      },
    });
    // customFields and metaData merge; json is replaced whole.
    expect(updated.customFields).toEqual({ 'first-name': 'Nia', company: 'Lockstep', 'last-name': 'Okoro' });
    expect(updated.metaData).toEqual({ source: 'lockstep', crmId: '42' });
    expect(updated.json).toEqual({ replaced: true });
    expect(updated.verified).toBe(true);
    expect(updated.auth.email).toBe('nia@lockstep.dev');
    expect((await ms.members.retrieve({ email: 'nia@lockstep.dev' })).data.id).toBe(created.id);

    expect(await ms.members.delete({ id: created.id })).toEqual({ data: { id: created.id } });
    expect(await ms.members.retrieve({ id: created.id })).toEqual({ data: null });
    expect((await ms.members.list({ limit: 1 })).totalCount).toBe(40);
  });

  it('addFreePlan / removeFreePlan answer "OK" and change the member', async () => {
    const { sim, ms } = await start();
    const id = sim.seeded!.members[0]!;
    const newsletter = DEFAULT_PLANS[1]!.id;
    expect(await ms.members.addFreePlan({ id, data: { planId: newsletter } })).toBe('OK');
    let { data } = await ms.members.retrieve({ id });
    expect(data.planConnections.map((c) => (typeof c === 'string' ? c : c.planId))).toContain(newsletter);
    expect(await ms.members.removeFreePlan({ id, data: { planId: newsletter } })).toBe('OK');
    ({ data } = await ms.members.retrieve({ id }));
    expect(data.planConnections.map((c) => (typeof c === 'string' ? c : c.planId))).not.toContain(newsletter);

    const paid = await failure(ms.members.addFreePlan({ id, data: { planId: PAID } }));
    expect(paid.code).toBe('generic-message');
    const unknown = await failure(ms.members.addFreePlan({ id, data: { planId: 'pln_nope-00000000' } }));
    expect(unknown.code).toBe('validation/plan-not-found');
    expect(lastStatus(sim)).toBe(400);
  });

  it('a write to a missing member, a bad value and a taken email reject with 400 bodies', async () => {
    const { sim, ms } = await start();
    const missing = await failure(ms.members.update({ id: 'mem_gone', data: { verified: true } }));
    expect(missing).toEqual({ code: 'generic-message', message: NO_MEMBER_MESSAGE });
    expect(lastStatus(sim)).toBe(400);
    expect(await failure(ms.members.delete({ id: 'mem_gone' }))).toEqual({
      code: 'generic-message',
      message: NO_MEMBER_MESSAGE,
    });

    const badEmail = await failure(ms.members.create({ email: 'not-an-email', password: 'long-enough-1' }));
    expect(badEmail.code).toBe('invalid-email');
    expect(lastStatus(sim)).toBe(400);

    const taken = sim.state.get(sim.seeded!.members[0]!)!.email;
    const dupe = await failure(ms.members.create({ email: taken, password: 'long-enough-1' }));
    expect(dupe.code).toBe('generic-message');
    expect(dupe.message).toMatch(/already taken/);
    const dupeUpdate = await failure(
      ms.members.update({ id: sim.seeded!.members[1]!, data: { email: taken.toUpperCase() } }),
    );
    expect(dupeUpdate.message).toMatch(/already taken/);

    const shortPassword = await failure(ms.members.create({ email: 'x@example.com', password: 'short' }));
    expect(shortPassword.code).toBe('generic-message');
    const noPlan = await failure(
      ms.members.create({ email: 'y@example.com', password: 'long-enough-1', plans: [{ planId: 'pln_x' }] }),
    );
    expect(noPlan.code).toBe('validation/plan-not-found');
    // Nothing was half-made.
    expect((await ms.members.list({ limit: 1 })).totalCount).toBe(40);
  });

  it('a wrong secret key rejects with validation/invalid-secret-key (401; 400 when malformed)', async () => {
    const { sim } = await start();
    const wrong = memberstackAdmin.init('sk_sb_ffffffffffffffffffff', { baseUrl: sim.url });
    const err = await failure(wrong.members.list());
    expect(err.code).toBe(INVALID_KEY_CODE);
    expect(lastStatus(sim)).toBe(401);

    const malformed = memberstackAdmin.init('pk_sb_public_key', { baseUrl: sim.url });
    expect((await failure(malformed.members.retrieve({ id: 'mem_x' }))).code).toBe(INVALID_KEY_CODE);
    expect(lastStatus(sim)).toBe(400);

    // A live key sees live data: none of the sandbox's members.
    const live = await start({ tokens: [{ token: 'sk_1a2b3c4d5e6f7a8b9c0d' }] });
    const liveClient = memberstackAdmin.init('sk_1a2b3c4d5e6f7a8b9c0d', { baseUrl: live.sim.url });
    const page = await liveClient.members.list();
    expect(page).toEqual({ totalCount: 0, endCursor: 0, hasNextPage: false, data: [] });
    expect(await liveClient.members.retrieve({ id: live.sim.seeded!.members[0]! })).toEqual({ data: null });
  });

  it('over 25 requests in a second rejects with the 429 body until the window passes', async () => {
    const clock = new ManualClock();
    const { sim, ms } = await start({ rateLimit: {}, clock });
    const results = await Promise.allSettled(Array.from({ length: 26 }, () => ms.members.list({ limit: 1 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(25);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toEqual({ code: 'generic-message', message: RATE_LIMIT_MESSAGE });
    expect(sim.requestLog.count({ status: 429 })).toBe(1);
    clock.advance(1000);
    expect((await ms.members.list({ limit: 1 })).data).toHaveLength(1);
  });

  it('verifyWebhookSignature accepts what the simulator delivers', async () => {
    const got: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    servers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/memberstack`;
    // The client checks the timestamp against the real time: the simulator runs on it here.
    const sim = await startMemberstackSimulator({ rateLimit: false, webhooks: { url } });
    started.push(sim);
    const ms = memberstackAdmin.init(sim.token, { baseUrl: sim.url });
    const { data } = await ms.members.create({ email: 'hook@example.com', password: 'long-enough-1' });
    await sim.flushWebhooks();
    expect(got).toHaveLength(1);
    const delivery = got[0]!;
    const payload = JSON.parse(delivery.body) as { event: string; payload: { id: string } };
    expect(payload.event).toBe('member.created');
    expect(payload.payload.id).toBe(data.id);
    const ok = ms.verifyWebhookSignature({
      headers: {
        'SVIX-ID': String(delivery.headers['svix-id']),
        'SVIX-TIMESTAMP': String(delivery.headers['svix-timestamp']),
        'SVIX-SIGNATURE': String(delivery.headers['svix-signature']),
      },
      secret: sim.webhooks!.secret,
      payload,
    });
    expect(ok).toBe(true);
    expect(() =>
      ms.verifyWebhookSignature({
        headers: {
          'SVIX-ID': String(delivery.headers['svix-id']),
          'SVIX-TIMESTAMP': String(delivery.headers['svix-timestamp']),
          'SVIX-SIGNATURE': String(delivery.headers['svix-signature']),
        },
        secret: sim.webhooks!.secret,
        payload: { ...payload, event: 'member.deleted' },
      }),
    ).toThrow(/did not match/);
  });
});
