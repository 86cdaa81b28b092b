import type { CanonicalValue } from '@lockstep/engine';
import { type MemberstackSimulator, startMemberstackSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { ConnectorError, type WriteResult } from '../sdk/connector';
import { createMemberstackConnector, type MemberstackConnector } from './memberstack-connector';
import { createMemberstackPort } from './port';
import { parseMemberstackWebhook, verifyMemberstackWebhook } from './webhooks';

type Fields = Record<string, CanonicalValue>;

const fastSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5)));

function connectorFor(
  sim: MemberstackSimulator,
  extra: Partial<Parameters<typeof createMemberstackConnector>[0]> = {},
) {
  return createMemberstackConnector({
    secretKey: sim.token,
    baseUrl: sim.url,
    // The simulator's limit is tested below; here the client does not pace itself.
    perSecond: 0,
    rateLimitWaitMs: 5,
    sleep: fastSleep,
    emailStableMs: 0,
    ...extra,
  });
}

let counter = 0;
const nextEmail = (label: string) => `${label}${++counter}@example.com`;

function member(sim: MemberstackSimulator, label: string, fields: Record<string, unknown> = {}): string {
  return sim.create({ email: nextEmail(label), password: 'password-123', ...fields }).id;
}

const ok = (r: WriteResult | undefined) => {
  if (!r?.ok) throw new Error(`write failed: ${JSON.stringify(r)}`);
  return r;
};
let keys = 0;
const key = () => `ms-test-${++keys}`;

runConformanceSuite('Memberstack (simulator)', async () => {
  const sim = await startMemberstackSimulator({
    idSeed: 1,
    seed: false,
    rateLimit: false,
    sandboxMemberLimit: false,
    webhooks: { url: 'http://127.0.0.1:9/memberstack-hook' },
  });
  const make = (token: string) => connectorFor(sim, { secretKey: token });
  return {
    connector: make(sim.token),
    tableId: 'members',
    sampleFields: (): Fields => ({
      email: nextEmail('conformance'),
      'customFields.first-name': `Conformance ${counter}`,
    }),
    async seed(count) {
      return Array.from({ length: count }, () =>
        member(sim, 'seeded', { customFields: { company: 'Seed' } }),
      );
    },
    async mutate(remoteId) {
      sim.update(remoteId, { customFields: { company: 'Changed in Memberstack' } });
      return { 'customFields.company': 'Changed in Memberstack' };
    },
    async remove(remoteId) {
      sim.remove(remoteId);
    },
    invalidFields: () => ({ email: 'not an email', 'customFields.first-name': 'Bad' }),
    async discover() {
      const port = createMemberstackPort({ apiUrl: sim.url, client: { perSecond: 0 } });
      return port.discoverSchema({ secretKey: sim.token }, 'test');
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(kind === 'rate_limited' ? { kind: 'rate_limit', count } : { status: 502, count });
    },
    async badAuthConnector() {
      return make('sk_sb_revoked0000000000');
    },
    webhook: {
      async deliver() {
        const id = member(sim, 'hooked');
        sim.update(id, { customFields: { company: 'Webhook Co' } });
        await sim.flushWebhooks();
        const d = sim.webhooks?.deliveries.filter((x) => x.message.event === 'member.updated').at(-1);
        if (!d) throw new Error('no delivery');
        return {
          headers: {
            'svix-id': d.message.id,
            'svix-timestamp': d.timestamp,
            'svix-signature': d.signature,
            'content-type': 'application/json',
          },
          body: d.message.body,
          expected: { tableRemoteId: 'members', recordId: id },
        };
      },
      verify: (headers, body) => verifyMemberstackWebhook(sim.webhooks?.secret ?? '', headers, body),
      parse: (headers, body) =>
        parseMemberstackWebhook(headers, body).flatMap((e) =>
          e.tables.map((t) => ({ tableRemoteId: t, ...(e.memberId ? { recordId: e.memberId } : {}) })),
        ),
    },
    close: () => sim.close(),
  };
});

describe('Memberstack connector against the simulator', () => {
  let sim: MemberstackSimulator;
  let connector: MemberstackConnector;
  beforeAll(async () => {
    sim = await startMemberstackSimulator({ idSeed: 7, rateLimit: false, sandboxMemberLimit: false });
    connector = connectorFor(sim);
  });
  afterAll(() => sim.close());
  afterEach(() => sim.faults.clear());

  it('checks the key (test or live by its prefix) and discovers members and plans with canonical types', async () => {
    const port = createMemberstackPort({ apiUrl: sim.url, client: { perSecond: 0 } });
    await expect(port.check({ secretKey: sim.token })).resolves.toEqual({ accountEmail: null });
    for (const wrong of ['sk_sb_wrongwrongwrong', 'not-a-key']) {
      const bad = await port.check({ secretKey: wrong }).catch((e) => e);
      expect(bad).toBeInstanceOf(ConnectorError);
      expect(bad.code).toBe('auth_invalid');
      expect(bad.userFacingMessage).toMatch(/secret key/);
    }
    expect(await port.listBases({ secretKey: sim.token })).toEqual([
      { remoteId: 'test', name: 'Memberstack (test mode)' },
    ]);
    const tables = await port.discoverSchema({ secretKey: sim.token, customFields: 'phone' }, 'test');
    expect(tables.map((t) => t.remoteId)).toEqual(['members', 'plans']);
    const members = new Map(tables[0]?.fields.map((f) => [f.remoteId, f]));
    expect(members.get('email')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(members.get('createdAt')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(members.get('plans')).toMatchObject({ fieldType: 'multi_select', readOnly: true });
    expect(members.get('plans')?.options.choices).toEqual(
      expect.arrayContaining(['pln_community-x7k2m9q4', 'pln_pro-monthly-h5d0w2z8']),
    );
    // The seed's custom fields, the one listed on the connection, and the metadata keys seen.
    for (const k of ['first-name', 'company', 'job-title', 'phone'])
      expect(members.get(`customFields.${k}`)).toMatchObject({ fieldType: 'text', readOnly: false });
    expect([...members.keys()].some((k) => k.startsWith('metaData.'))).toBe(true);
    for (const f of tables[1]?.fields ?? []) expect(f.readOnly).toBe(true);
  });

  it('converts values both ways: custom fields as text, metadata by type, plans and creation read-only', async () => {
    const [made] = await connector.write('members', [
      {
        kind: 'create',
        idempotencyKey: key(),
        fields: {
          email: 'Convert.Me@Example.com',
          'customFields.first-name': 'Zoë',
          'customFields.company': 'Acme',
          'metaData.score': '12.5',
          'metaData.vip': true,
          'metaData.prefs': { json: { theme: 'dark' } },
          plans: ['pln_pro-monthly-h5d0w2z8'],
          createdAt: '2001-01-01T00:00:00.000Z',
        },
      },
    ]);
    const id = ok(made).remoteId;
    const stored = sim.state.get(id);
    expect(stored?.email).toBe('convert.me@example.com');
    expect(stored?.customFields).toEqual({ 'first-name': 'Zoë', company: 'Acme' });
    // Canonical numbers are text; a new metadata key holds the text it was given.
    expect(stored?.metaData).toEqual({ score: '12.5', vip: true, prefs: { theme: 'dark' } });
    // Read-only fields are not written.
    expect(stored?.planConnections).toEqual([]);
    expect(ok(made).postImage?.fields).toMatchObject({
      email: 'convert.me@example.com',
      'customFields.first-name': 'Zoë',
      'metaData.vip': true,
      'metaData.prefs': { json: { theme: 'dark' } },
      plans: null,
    });
    sim.update(id, { metaData: { score: 7 } });
    sim.addPlan(id, 'pln_community-x7k2m9q4');
    const [read] = await connector.readRecords('members', [id]);
    expect(read?.fields).toMatchObject({
      'metaData.score': '7',
      plans: ['pln_community-x7k2m9q4'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // A number stays a number; a cleared custom field is emptied, the others kept.
    const [updated] = await connector.write('members', [
      {
        kind: 'update',
        remoteId: id,
        idempotencyKey: key(),
        fields: { 'metaData.score': '8', 'customFields.company': null },
      },
    ]);
    expect(ok(updated).postImage?.fields).toMatchObject({
      'metaData.score': '8',
      'customFields.first-name': 'Zoë',
    });
    expect(sim.state.get(id)?.metaData.score).toBe(8);
    expect(sim.state.get(id)?.customFields).toEqual({ 'first-name': 'Zoë' });
    expect(sim.state.get(id)?.metaData).toMatchObject({ vip: true, prefs: { theme: 'dark' } });
  });

  it('offers a Full name made of the first and last names, written back split at the last space', async () => {
    const port = createMemberstackPort({ apiUrl: sim.url, client: { perSecond: 0 } });
    const [members] = await port.discoverSchema({ secretKey: sim.token }, 'test');
    expect(members?.fields.find((f) => f.remoteId === 'fullName')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
    });
    const [made] = await connector.write('members', [
      {
        kind: 'create',
        idempotencyKey: key(),
        fields: { email: 'mary.ann@example.com', fullName: 'Mary Ann Smith', 'customFields.company': 'Acme' },
      },
    ]);
    const id = ok(made).remoteId;
    expect(sim.state.get(id)?.customFields).toEqual({
      'first-name': 'Mary Ann',
      'last-name': 'Smith',
      company: 'Acme',
    });
    expect(ok(made).postImage?.fields.fullName).toBe('Mary Ann Smith');
    sim.update(id, { customFields: { 'last-name': 'Jones' } });
    expect((await connector.readRecords('members', [id]))[0]?.fields.fullName).toBe('Mary Ann Jones');
    // Cleared: both parts emptied, the other custom fields kept.
    const [cleared] = await connector.write('members', [
      { kind: 'update', remoteId: id, idempotencyKey: key(), fields: { fullName: null } },
    ]);
    expect(ok(cleared).postImage?.fields.fullName ?? null).toBeNull();
    expect(sim.state.get(id)?.customFields).toEqual({ company: 'Acme' });
  });

  it('pages to the end of a large app, every member once', async () => {
    const big = await startMemberstackSimulator({
      idSeed: 3,
      seed: { members: 40 },
      rateLimit: false,
      sandboxMemberLimit: false,
    });
    try {
      for (let i = 0; i < 210; i++) big.create({ email: `bulk${i}@example.com`, password: 'password-123' });
      const c = connectorFor(big);
      const { records, pages } = await readAll(c, 'members', null, 1000);
      expect(records).toHaveLength(250);
      expect(new Set(records.map((r) => r.id)).size).toBe(250);
      expect(pages.at(-1)?.hasMore).toBe(false);
      // 100 a page (Memberstack's largest).
      expect(big.requestLog.count({ method: 'GET', path: '/members' })).toBe(3);
      // Nothing changed: the next pass returns nothing (and reads every page again).
      const again = await readAll(c, 'members', pages.at(-1)?.nextCursor ?? null, 1000);
      expect(again.records).toEqual([]);
      expect(again.deletedIds).toEqual([]);
    } finally {
      await big.close();
    }
  });

  it('reads an in-app edit and a delete incrementally, and a member made mid-pass', async () => {
    const changed = member(sim, 'inc');
    const deleted = member(sim, 'inc');
    const first = await readAll(connector, 'members', null, 30);
    expect(first.pages.length).toBeGreaterThan(1);
    sim.update(changed, { customFields: { 'job-title': 'Edited in the dashboard' } });
    sim.remove(deleted);
    const made = member(sim, 'inc');
    const next = await readAll(connector, 'members', first.cursor, 30);
    expect(next.records.map((r) => r.id).sort()).toEqual([changed, made].sort());
    expect(next.records.find((r) => r.id === changed)?.fields['customFields.job-title']).toBe(
      'Edited in the dashboard',
    );
    expect(next.deletedIds).toEqual([deleted]);
    // An email edited in the app is read like any other value.
    sim.update(changed, { email: 'renamed.in.app@example.com' });
    const third = await readAll(connector, 'members', next.cursor, 30);
    expect(third.records.map((r) => [r.id, r.fields.email])).toEqual([
      [changed, 'renamed.in.app@example.com'],
    ]);
  });

  it('fails one bad record alone, with a clear message; a taken email names its member', async () => {
    const taken = sim.state.get(member(sim, 'taken'))?.email as string;
    const good1 = nextEmail('good');
    const good2 = nextEmail('good');
    const results = await connector.write('members', [
      { kind: 'create', idempotencyKey: key(), fields: { email: good1 } },
      { kind: 'create', idempotencyKey: key(), fields: { email: 'not an email' } },
      { kind: 'create', idempotencyKey: key(), fields: { 'customFields.company': 'No email' } },
      { kind: 'create', idempotencyKey: key(), fields: { email: taken.toUpperCase() } },
      {
        kind: 'update',
        remoteId: 'mem_doesnotexist',
        idempotencyKey: key(),
        fields: { 'customFields.company': 'x' },
      },
      { kind: 'create', idempotencyKey: key(), fields: { email: good2 } },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, false, false, true]);
    for (const r of results.filter((x) => !x.ok)) if (!r.ok) expect(r.error.userFacingMessage).toMatch(/\S/);
    const [, bad, noEmail, dup, missing] = results;
    if (bad?.ok === false)
      expect(bad.error).toMatchObject({ code: 'validation', userFacingMessage: /email/i });
    if (noEmail?.ok === false) expect(noEmail.error.userFacingMessage).toMatch(/needs an email/);
    if (dup?.ok === false) {
      expect(dup.existingId).toBe(sim.state.findByEmail(taken)?.id);
      expect(dup.error.userFacingMessage).toMatch(/already has the email/);
    }
    if (missing?.ok === false) expect(missing.error.code).toBe('not_found');
    expect(sim.state.findByEmail(good1)).toBeDefined();
    expect(sim.state.findByEmail(good2)).toBeDefined();
  });

  it('refuses to overwrite a member changed since it was read (version_conflict with its values)', async () => {
    const id = member(sim, 'conflict', { customFields: { company: 'Read by Lockstep' } });
    const [before] = await connector.readRecords('members', [id]);
    sim.update(id, { customFields: { company: 'Edited in Memberstack' } });
    const [r] = await connector.write('members', [
      {
        kind: 'update',
        remoteId: id,
        idempotencyKey: key(),
        fields: { 'customFields.company': 'From Lockstep' },
        expected: { 'customFields.company': before?.fields['customFields.company'] ?? null },
      },
    ]);
    expect(r?.ok).toBe(false);
    if (r && !r.ok) {
      expect(r.error.code).toBe('version_conflict');
      expect(r.current?.fields['customFields.company']).toBe('Edited in Memberstack');
    }
    expect(sim.state.get(id)?.customFields.company).toBe('Edited in Memberstack');
    // A delete of a changed member spares it; of an unchanged one goes through.
    const [spared] = await connector.write('members', [
      {
        kind: 'delete',
        remoteId: id,
        idempotencyKey: key(),
        expected: { 'customFields.company': 'Read by Lockstep' },
      },
    ]);
    expect(spared?.ok).toBe(false);
    expect(sim.state.get(id)).toBeDefined();
    const [gone] = await connector.write('members', [
      {
        kind: 'delete',
        remoteId: id,
        idempotencyKey: key(),
        expected: { 'customFields.company': 'Edited in Memberstack' },
      },
    ]);
    expect(gone?.ok).toBe(true);
    expect(sim.state.get(id)).toBeUndefined();
    // Deleted already (in Memberstack meanwhile, or a replay): the delete has happened.
    const [again] = await connector.write('members', [
      { kind: 'delete', remoteId: id, idempotencyKey: key() },
    ]);
    expect(again?.ok).toBe(true);
  });

  it('writes an email change only once it has stayed the same, never with another field, and reads it back', async () => {
    let clock = 1_000_000;
    const c = connectorFor(sim, { emailStableMs: 60_000, now: () => clock });
    const id = member(sim, 'mail', { customFields: { company: 'Before' } });
    const old = sim.state.get(id)?.email;
    sim.requestLog.reset();
    // An update of another field sends no email.
    ok(
      (
        await c.write('members', [
          {
            kind: 'update',
            remoteId: id,
            idempotencyKey: key(),
            fields: { 'customFields.company': 'Other field' },
          },
        ])
      )[0],
    );
    expect(sim.state.get(id)?.email).toBe(old);
    // A new email: the other fields land now, the email waits (a retryable failure of the batch).
    const edit = (email: string) =>
      c.write('members', [
        {
          kind: 'update',
          remoteId: id,
          idempotencyKey: key(),
          fields: { email, 'customFields.company': 'With the email' },
        },
      ]);
    const young = await edit('typo@exmple.com').catch((e) => e);
    expect(young).toBeInstanceOf(ConnectorError);
    expect(young.code).toBe('transient');
    expect(young.retryAfterMs).toBe(60_000);
    expect(sim.state.get(id)?.email).toBe(old);
    expect(sim.state.get(id)?.customFields.company).toBe('With the email');
    // Corrected within the minute: the wait starts again for the new value.
    clock += 30_000;
    expect((await edit('fixed@example.com').catch((e) => e)).retryAfterMs).toBe(60_000);
    clock += 59_000;
    expect((await edit('fixed@example.com').catch((e) => e)).retryAfterMs).toBe(1_000);
    expect(sim.state.get(id)?.email).toBe(old);
    clock += 1_000;
    const [written] = await edit('fixed@example.com');
    expect(ok(written).postImage?.fields.email).toBe('fixed@example.com');
    expect(sim.state.get(id)?.email).toBe('fixed@example.com');
    // Confirmed by reading the member back after the write.
    const patches = sim.requestLog.entries.filter((e) => e.method === 'PATCH').length;
    expect(patches).toBeGreaterThanOrEqual(2);
    expect(sim.requestLog.entries.at(-1)).toMatchObject({ method: 'GET', path: `/members/${id}` });
  });

  it('answers a write sent again (a retried chunk) from its idempotency key, without writing twice', async () => {
    const id = member(sim, 'replay', { customFields: { company: 'One' } });
    const update = {
      kind: 'update' as const,
      remoteId: id,
      idempotencyKey: key(),
      fields: { 'customFields.company': 'Two' },
      expected: { 'customFields.company': 'One' },
    };
    ok((await connector.write('members', [update]))[0]);
    const create = { kind: 'create' as const, idempotencyKey: key(), fields: { email: nextEmail('replay') } };
    const made = ok((await connector.write('members', [create]))[0]).remoteId;
    sim.requestLog.reset();
    const again = await connector.write('members', [update, create]);
    expect(again.map((r) => r.ok && r.remoteId)).toEqual([id, made]);
    expect(sim.requestLog.count({ method: 'PATCH' })).toBe(0);
    expect(sim.requestLog.count({ method: 'POST' })).toBe(0);
  });

  it('reads plans from plan connections, read-only', async () => {
    const page = await connector.read('plans', null, { pageSize: 100 });
    expect(page.scanComplete).toBe(true);
    const byId = new Map(page.records.map((r) => [r.id, r.fields]));
    expect(byId.get('pln_pro-monthly-h5d0w2z8')).toEqual({ name: 'Pro', type: 'PAID' });
    expect(byId.get('pln_community-x7k2m9q4')).toEqual({ name: 'Community', type: 'FREE' });
    const again = await connector.read('plans', page.nextCursor, { pageSize: 100 });
    expect(again.records).toEqual([]);
    const [refused] = await connector.write('plans', [
      { kind: 'update', remoteId: 'pln_pro-monthly-h5d0w2z8', idempotencyKey: key(), fields: { name: 'x' } },
    ]);
    expect(refused?.ok === false && refused.error.code).toBe('validation');
  });

  it('rides out a 429 storm by Memberstack’s Retry-After with nothing lost or doubled', async () => {
    const limited = await startMemberstackSimulator({
      idSeed: 11,
      seed: false,
      sandboxMemberLimit: false,
      rateLimit: { perSecond: 10 },
    });
    try {
      // No pacing of its own, no fixed wait: only the 429s and their Retry-After slow it down.
      const c = createMemberstackConnector({
        secretKey: limited.token,
        baseUrl: limited.url,
        perSecond: 0,
        emailStableMs: 0,
      });
      const ids = Array.from(
        { length: 6 },
        () => limited.create({ email: nextEmail('storm'), password: 'password-123' }).id,
      );
      limited.faults.next({ kind: 'rate_limit', count: 3 });
      const results = await c.write('members', [
        ...Array.from({ length: 8 }, () => ({
          kind: 'create' as const,
          idempotencyKey: key(),
          fields: { email: nextEmail('storm') },
        })),
        ...ids.map((id) => ({
          kind: 'update' as const,
          remoteId: id,
          idempotencyKey: key(),
          fields: { 'customFields.company': `Storm ${id}` },
        })),
      ]);
      expect(results.every((r) => r.ok)).toBe(true);
      expect(limited.requestLog.count({ status: 429 })).toBeGreaterThan(3);
      expect(limited.state.members.size).toBe(14);
      for (const id of ids) expect(limited.state.get(id)?.customFields.company).toBe(`Storm ${id}`);
      const { records } = await readAll(c, 'members', null, 100);
      expect(records).toHaveLength(14);
    } finally {
      await limited.close();
    }
  }, 30_000);
});
