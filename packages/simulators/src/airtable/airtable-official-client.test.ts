/**
 * Contract test: Airtable's own JavaScript client (airtable.js, pinned) against the simulator. A
 * simulator is only faithful if the vendor's client can use it: every call here goes through the
 * client, and the answers are checked against what its types (Record, AirtableError) promise.
 */
import Airtable from 'airtable';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type AirtableSimulator,
  type StartAirtableSimulatorOptions,
  startAirtableSimulator,
} from './index.ts';

type Contact = {
  Name: string;
  Email: string;
  Phone: string;
  Status: string;
  Notes: string;
  Created: string;
  'Last Modified': string;
};

const started: AirtableSimulator[] = [];

async function start(options: StartAirtableSimulatorOptions = {}): Promise<AirtableSimulator> {
  const sim = await startAirtableSimulator({ rateLimit: false, idSeed: 7, ...options });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  vi.restoreAllMocks();
  while (started.length) await started.pop()?.close();
});

function client(sim: AirtableSimulator, options: Airtable.AirtableOptions = {}) {
  const crm = sim.crm;
  if (!crm) throw new Error('not seeded');
  const base = new Airtable({ apiKey: sim.token, endpointUrl: sim.url, ...options }).base(crm.baseId);
  return { crm, base, contacts: base.table<Partial<Contact>>('Contacts') };
}

/** What airtable.js's Record type promises: an id, the raw JSON with createdTime, fields by name. */
function expectRecord(r: Airtable.Record<Partial<Contact>>): void {
  expect(r.id).toMatch(/^rec[A-Za-z0-9]{14}$/);
  expect(typeof r.fields).toBe('object');
  expect(r._rawJson.id).toBe(r.id);
  expect(new Date(r._rawJson.createdTime).toISOString()).toBe(r._rawJson.createdTime);
  if (r.fields.Name !== undefined) expect(typeof r.get('Name')).toBe('string');
  // Computed fields come back on every read: created and last modified times, whole seconds.
  for (const key of ['Created', 'Last Modified'] as const) {
    const v = r.fields[key];
    if (v !== undefined) expect(v).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  }
}

/** airtable.js rejects with an AirtableError: `error` (the type), `message`, `statusCode`. */
async function failure(p: Promise<unknown>): Promise<Airtable.Error> {
  const err = await p.then(
    () => {
      throw new Error('expected the client to reject');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Airtable.Error);
  const e = err as Airtable.Error;
  expect(typeof e.error).toBe('string');
  expect(typeof e.message).toBe('string');
  expect(typeof e.statusCode).toBe('number');
  return e;
}

describe('airtable.js against the Airtable simulator', () => {
  it('pages through select() with eachPage and all(), following offsets', async () => {
    const sim = await start();
    const { contacts } = client(sim);
    const pages: number[] = [];
    const seen: string[] = [];
    await contacts.select({ pageSize: 10, fields: ['Name', 'Email'] }).eachPage((records, next) => {
      pages.push(records.length);
      for (const r of records) {
        expectRecord(r);
        expect(Object.keys(r.fields).every((k) => k === 'Name' || k === 'Email')).toBe(true);
        seen.push(r.id);
      }
      next();
    });
    expect(pages).toEqual([10, 10, 10, 10, 10]);
    expect(new Set(seen).size).toBe(50);
    // The offsets the client sent back were the simulator's own: itr.../rec...
    expect(sim.requestLog.count({ method: 'GET', path: /\/Contacts$/ })).toBe(5);

    const all = await contacts.select({ sort: [{ field: 'Name', direction: 'desc' }], maxRecords: 30 }).all();
    expect(all).toHaveLength(30);
    const names = all.map((r) => r.get('Name') as string);
    expect(names).toEqual([...names].sort().reverse());
    const first = await contacts
      .select({ filterByFormula: `{Email} = '${all[0]?.get('Email')}'` })
      .firstPage();
    expect(first.map((r) => r.id)).toEqual([all[0]?.id]);
  });

  it('lists through POST listRecords when asked to, or when the URL would pass 15,000 characters', async () => {
    const sim = await start();
    const { contacts } = client(sim);
    const posted = await contacts
      .select({ method: 'post', pageSize: 20, fields: ['Name'], recordMetadata: ['commentCount'] })
      .all();
    expect(posted).toHaveLength(50);
    for (const r of posted) {
      expectRecord(r);
      expect(Object.keys(r.fields)).toEqual(['Name']);
      expect(r.commentCount).toBe(0);
    }
    expect(sim.requestLog.count({ method: 'POST', path: /\/Contacts\/listRecords$/ })).toBe(3);
    // A formula too long for a GET goes as a POST on its own.
    const long = `OR(${Array.from({ length: 700 }, (_, i) => `{Email} = 'nobody${i}@example.com'`).join(', ')}, {Name} != '')`;
    expect(long.length).toBeGreaterThan(15_000);
    expect(await contacts.select({ filterByFormula: long, pageSize: 100 }).all()).toHaveLength(50);
    expect(sim.requestLog.count({ method: 'POST', path: /\/Contacts\/listRecords$/ })).toBe(4);
  });

  it('finds, creates (one and ten), updates, replaces and destroys records', async () => {
    const sim = await start();
    const { crm, contacts } = client(sim);
    const found = await contacts.find(crm.contactIds[0] as string);
    expectRecord(found);
    expect(found.id).toBe(crm.contactIds[0]);

    const one = await contacts.create({ Name: 'Ada Lovelace', Email: 'ada@example.com' });
    expectRecord(one);
    expect(one.fields).toMatchObject({ Name: 'Ada Lovelace', Email: 'ada@example.com' });
    expect(Object.keys(one.fields).sort()).toEqual(['Created', 'Email', 'Last Modified', 'Name']);
    expect(sim.state.getRecord(crm.baseId, 'Contacts', one.id)?.fields).toMatchObject({
      Name: 'Ada Lovelace',
    });

    const ten = await contacts.create(
      Array.from({ length: 10 }, (_, i) => ({ fields: { Name: `Batch ${i}`, Email: `b${i}@example.com` } })),
    );
    expect(ten).toHaveLength(10);
    for (const r of ten) expectRecord(r);
    expect(ten.map((r) => r.get('Name'))).toEqual(Array.from({ length: 10 }, (_, i) => `Batch ${i}`));

    const updated = await contacts.update(one.id, { Email: 'ada@lovelace.example' });
    expect(updated.fields).toMatchObject({ Name: 'Ada Lovelace', Email: 'ada@lovelace.example' });
    const many = await contacts.update(
      ten.slice(0, 2).map((r) => ({ id: r.id, fields: { Email: 'same@example.com' } })),
    );
    expect(many.map((r) => r.get('Email'))).toEqual(['same@example.com', 'same@example.com']);
    // replace is a PUT: fields it does not name are cleared.
    const replaced = await contacts.replace(one.id, { Name: 'Countess of Lovelace' });
    expect(replaced.get('Name')).toBe('Countess of Lovelace');
    expect(replaced.fields.Email).toBeUndefined();

    const gone = await contacts.destroy(one.id);
    expect(gone.id).toBe(one.id);
    const gones = await contacts.destroy(ten.map((r) => r.id));
    expect(gones.map((r) => r.id)).toEqual(ten.map((r) => r.id));
    expect(sim.state.getRecord(crm.baseId, 'Contacts', one.id)).toBeUndefined();
    const missing = await failure(contacts.find(one.id));
    expect(missing).toMatchObject({ error: 'NOT_FOUND', statusCode: 404 });
  });

  it('writes an attachment by URL and reads it back re-hosted, in the shape of the Attachment type', async () => {
    const sim = await start();
    const { base } = client(sim);
    const deals = base.table<{ Deal: string; Contract: Airtable.Attachment[] }>('Deals');
    const made = await deals.create({
      Deal: 'Contract test',
      Contract: [{ url: 'https://files.example.com/a/contract.pdf' } as Airtable.Attachment],
    });
    const [att] = made.get('Contract') as Airtable.Attachment[];
    expect(att?.id).toMatch(/^att[A-Za-z0-9]{14}$/);
    expect(att?.filename).toBe('contract.pdf');
    expect(att?.url).toMatch(
      /^https:\/\/v5\.airtableusercontent\.com\/v3\/u\/1\/1\/\d+\/[\w-]+\/att\w+\/contract\.pdf$/,
    );
    expect(typeof att?.size).toBe('number');
    expect(att?.type).toBe('application/pdf');
    // Keeping it by id, as Airtable requires for existing attachments.
    const kept = await deals.update(made.id, { Contract: [{ id: att?.id } as Airtable.Attachment] });
    expect((kept.get('Contract') as Airtable.Attachment[])[0]?.id).toBe(att?.id);
  });

  it('turns Airtable error bodies into AirtableErrors with the type and status', async () => {
    const sim = await start();
    const { base, contacts } = client(sim);
    // An unknown table: Airtable answers 403 INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND, which
    // airtable.js reports as its own NOT_AUTHORIZED.
    const unknown = await failure(base.table('Nope').select().firstPage());
    expect(unknown).toMatchObject({ error: 'NOT_AUTHORIZED', statusCode: 403 });
    // 422 bodies pass through: the type and Airtable's message.
    const badField = await failure(contacts.create({ Nope: 'x' } as Partial<Contact>));
    expect(badField).toMatchObject({
      error: 'UNKNOWN_FIELD_NAME',
      message: 'Unknown field name: "Nope"',
      statusCode: 422,
    });
    const tooMany = await failure(
      contacts.create(Array.from({ length: 11 }, (_, i) => ({ fields: { Name: `x${i}` } }))),
    );
    expect(tooMany).toMatchObject({ error: 'INVALID_RECORDS', statusCode: 422 });
    const badFormula = await failure(contacts.select({ filterByFormula: 'NOPE(' }).firstPage());
    expect(badFormula).toMatchObject({ error: 'INVALID_FILTER_BY_FORMULA', statusCode: 422 });
    const wrongToken = new Airtable({ apiKey: 'patWrong.token', endpointUrl: sim.url }).base(sim.crm!.baseId);
    const unauthorized = await failure(wrongToken.table('Contacts').select().firstPage());
    expect(unauthorized).toMatchObject({ error: 'AUTHENTICATION_REQUIRED', statusCode: 401 });
  });

  it('retries a 429 itself (backing off) until the 30 s penalty is over, or reports it when told not to', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, rateLimit: {} });
    const { contacts } = client(sim);
    // Jitter to ~0: airtable.js waits random() * 5 s * 2^attempt between attempts.
    vi.spyOn(Math, 'random').mockReturnValue(0.001);
    for (let i = 0; i < 5; i++) await contacts.select({ pageSize: 1 }).firstPage();
    const pending = contacts.select({ pageSize: 1 }).firstPage();
    await vi.waitFor(() => expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(2));
    clock.advance(30_000);
    const page = await pending;
    expect(page).toHaveLength(1);
    expectRecord(page[0]!);

    clock.advance(1_000);
    for (let i = 0; i < 5; i++) await contacts.select({ pageSize: 1 }).firstPage();
    const noRetry = client(sim, { noRetryIfRateLimited: true }).contacts;
    const limited = await failure(noRetry.select({ pageSize: 1 }).firstPage());
    expect(limited).toMatchObject({ error: 'TOO_MANY_REQUESTS', statusCode: 429 });
  });

  it('restarts a listing whose offset expired, as Airtable tells clients to', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    const { contacts } = client(sim);
    let pages = 0;
    const err = await failure(
      contacts.select({ pageSize: 20 }).eachPage((_records, next) => {
        pages++;
        clock.advance(6 * 60_000);
        next();
      }),
    );
    expect(pages).toBe(1);
    expect(err).toMatchObject({ error: 'LIST_RECORDS_ITERATOR_NOT_AVAILABLE', statusCode: 422 });
    expect(await contacts.select({ pageSize: 20 }).all()).toHaveLength(50);
  });
});
