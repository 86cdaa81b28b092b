import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CanonicalValue, normalizeMarkdown } from '@lockstep/engine';
import { ManualClock, type NotionSimulator, startNotionSimulator } from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { createNotionConnector, type NotionConnector, type NotionConnectorOptions } from './notion-connector';
import { markdownToRichText, richTextToMarkdown } from './rich-text';

type Fields = Record<string, CanonicalValue>;

const fast = { sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 5))) };

async function fieldIds(connector: NotionConnector, dataSourceId: string): Promise<Record<string, string>> {
  return Object.fromEntries((await connector.fieldsOf(dataSourceId)).map((f) => [f.name, f.remoteId]));
}

/** A local endpoint that records what Notion POSTs to it. */
async function receiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notion`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let counter = 0;

runConformanceSuite('Notion (simulator)', async () => {
  // The simulator's 3 req/s limit is off here (pacing is tested below); faults inject 429s instead.
  const sim = await startNotionSimulator({
    seed: { people: 5 },
    rateLimit: false,
    autoDeliverWebhooks: false,
  });
  const ds = sim.workspace!.peopleDataSourceId;
  const options: NotionConnectorOptions = {
    token: sim.token,
    baseUrl: sim.url,
    rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
    http: fast,
  };
  const connector = createNotionConnector(options);
  const ids = await fieldIds(connector, ds);
  const [name, email, status, notes, score] = [ids.Name!, ids.Email!, ids.Status!, ids.Notes!, ids.Score!];
  const hook = await receiver();
  return {
    connector,
    tableId: ds,
    sampleFields(): Fields {
      counter += 1;
      return {
        [name]: `Conformance ${counter}`,
        [email]: `c${counter}@example.com`,
        [status]: 'Lead',
        [notes]: normalizeMarkdown(`Met at **Conf ${counter}**, see [notes](https://example.com/${counter})`),
        [score]: String(counter),
      };
    },
    async seed(count) {
      return Array.from({ length: count }, () => {
        counter += 1;
        return sim.createPage(ds, { Name: `Seeded ${counter}` }).id;
      });
    },
    async mutate(remoteId) {
      sim.editPage(remoteId, { Name: 'Changed in Notion', Status: 'Customer' });
      return { [name]: 'Changed in Notion', [status]: 'Customer' };
    },
    async remove(remoteId) {
      sim.trashPage(remoteId);
    },
    invalidFields: () => ({ [name]: 'Bad status', [status]: 'Not an option' }),
    async discover() {
      const sources = await connector.listDataSources();
      return Promise.all(
        sources.map(async (s) => ({
          remoteId: s.id,
          fields: (await connector.fieldsOf(s.id)).map((f) => ({
            remoteId: f.remoteId,
            fieldType: f.fieldType,
          })),
        })),
      );
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count === 0) return;
      if (kind === 'rate_limited') sim.faults.next({ kind: 'rate_limit', count });
      else
        sim.faults.next({
          status: 503,
          count,
          body: {
            object: 'error',
            status: 503,
            code: 'service_unavailable',
            message: 'Notion is unavailable.',
          },
        });
    },
    async badAuthConnector() {
      sim.state.addToken({ token: 'ntn_revokedToken000', botId: sim.state.botId });
      const c = createNotionConnector({ ...options, token: 'ntn_revokedToken000' });
      await c.describe(ds); // schema cached while the token still worked
      sim.revokeToken('ntn_revokedToken000');
      return c;
    },
    webhook: {
      async deliver() {
        const sub = await sim.webhooks.subscribe({ url: hook.url });
        const token = JSON.parse(hook.received[0]!.body).verification_token as string;
        options.webhookVerificationToken = token;
        sim.webhooks.verify(sub.id, token);
        const page = sim.createPage(ds, { Name: 'Webhook trigger' });
        await sim.webhooks.flush();
        const delivery = hook.received.at(-1)!;
        return {
          headers: delivery.headers as Record<string, string>,
          body: delivery.body,
          expected: { tableRemoteId: ds, recordId: page.id },
        };
      },
      verify: (headers, body) => connector.verifyWebhook(headers, body),
      parse: (headers, body) => connector.parseWebhook(headers, body),
    },
    close: async () => {
      await hook.close();
      await sim.close();
    },
  };
});

describe('Notion connector specifics', () => {
  let sim: NotionSimulator;
  let clock: ManualClock;
  let connector: NotionConnector;
  let ds: string;
  let f: Record<string, string>;
  beforeAll(async () => {
    clock = new ManualClock('2026-03-02T12:00:10.000Z');
    sim = await startNotionSimulator({ clock, rateLimit: false, autoDeliverWebhooks: false });
    ds = sim.workspace!.peopleDataSourceId;
    connector = createNotionConnector({
      token: sim.token,
      baseUrl: sim.url,
      rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
      http: fast,
    });
    f = await fieldIds(connector, ds);
  });
  afterAll(() => sim.close());

  it('maps Notion property types to canonical types and read-only flags', async () => {
    const fields = await connector.fieldsOf(ds);
    const by = Object.fromEntries(fields.map((x) => [x.name, x]));
    expect(by.Name).toMatchObject({ remoteId: 'title', fieldType: 'text', readOnly: false });
    expect(by.Notes?.fieldType).toBe('rich_text');
    expect(by.Status).toMatchObject({
      fieldType: 'single_select',
      choices: expect.arrayContaining(['Lead']),
    });
    expect(by.Tags?.fieldType).toBe('multi_select');
    expect(by.Score?.fieldType).toBe('number');
    expect(by['Signed up']?.fieldType).toBe('date');
    expect(by.Newsletter?.fieldType).toBe('boolean');
    expect(by.Phone?.fieldType).toBe('phone');
    expect(by.Company).toMatchObject({
      fieldType: 'relations',
      relationDataSourceId: sim.workspace!.companiesDataSourceId,
    });
    for (const ro of ['Temperature', 'Created', 'Last edited', 'Created by', 'ID', 'Owner'])
      expect(by[ro]?.readOnly, ro).toBe(true);
    expect(by.ID?.fieldType).toBe('text');
    expect(by.Created?.fieldType).toBe('datetime');
  });

  it('reads rich text as Markdown and writes Markdown back as annotated segments', async () => {
    const first = sim.workspace!.personIds[0]!; // seeded with bold and italic notes
    const [record] = (await connector.fetchPages(ds, [first])).records;
    expect(record?.fields[f.Notes!]).toBe('Met at **NotionConf**; follow up in _Q3_');
    expect(record?.fields[f.ID!]).toBe('PPL-1');

    const md = normalizeMarkdown(
      'A **bold** and _italic_ [link](https://example.com/x) with `code`\\\nnext line',
    );
    const [res] = await connector.write(ds, [
      { kind: 'update', remoteId: first, fields: { [f.Notes!]: md }, idempotencyKey: 'rt-1' },
    ]);
    expect(res?.ok && res.postImage?.fields[f.Notes!]).toBe(md);
    const stored = (
      sim.pageJson(first).properties as Record<string, { rich_text: Record<string, unknown>[] }>
    ).Notes!.rich_text;
    expect(stored.map((s) => s.plain_text).join('')).toBe('A bold and italic link with code\nnext line');
    expect(stored.find((s) => s.plain_text === 'bold')).toMatchObject({ annotations: { bold: true } });
    expect(stored.find((s) => s.plain_text === 'link')).toMatchObject({ href: 'https://example.com/x' });
    expect(stored.find((s) => s.plain_text === 'code')).toMatchObject({ annotations: { code: true } });
  });

  it('splits long text into 2000-character segments and fails oversized values before any request', async () => {
    const id = sim.workspace!.personIds[1]!;
    const long = 'word '.repeat(900).trim(); // 4499 characters
    const [ok] = await connector.write(ds, [
      { kind: 'update', remoteId: id, fields: { [f.Notes!]: long }, idempotencyKey: 'long-1' },
    ]);
    expect(ok?.ok).toBe(true);
    const segments = (sim.pageJson(id).properties as Record<string, { rich_text: unknown[] }>).Notes!
      .rich_text;
    expect(segments).toHaveLength(3);
    expect(ok?.ok && ok.postImage?.fields[f.Notes!]).toBe(long);

    sim.requestLog.reset();
    const companies = Array.from(
      { length: 101 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const tooMuch = 'x'.repeat(2000 * 100 + 1);
    const results = await connector.write(ds, [
      { kind: 'update', remoteId: id, fields: { [f.Company!]: companies }, idempotencyKey: 'rel-1' },
      { kind: 'update', remoteId: id, fields: { [f.Name!]: tooMuch }, idempotencyKey: 'title-1' },
    ]);
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    expect(results[0]?.ok === false && results[0].error).toMatchObject({ code: 'validation' });
    expect(results[0]?.ok === false && results[0].error.message).toMatch(/at most 100/);
    expect(sim.requestLog.count({ method: 'PATCH' })).toBe(0);
  });

  it('reads every relation past the 25 a page object lists', async () => {
    const company = sim.workspace!.companyIds[0]!;
    const companies = sim.workspace!.companiesDataSourceId;
    const cf = await fieldIds(connector, companies);
    const people = sim.workspace!.personIds.slice(0, 30);
    sim.editPage(company, { People: people });
    const [record] = (await connector.fetchPages(companies, [company])).records;
    expect(record?.fields[cf.People!]).toEqual([...people].sort());
  });

  it('re-reads a minute of overlap without delivering unchanged pages twice, and never loses a same-minute edit', async () => {
    const scan = await readAll(connector, ds, null, 100);
    expect(scan.pages.at(-1)?.scanComplete).toBe(true);
    // No change: the overlap is re-read but nothing is delivered.
    const idle = await readAll(connector, ds, scan.cursor, 100);
    expect(idle.records).toEqual([]);

    const id = sim.workspace!.personIds[5]!;
    clock.advance(5_000); // 12:00:15, same minute as the scan
    sim.editPage(id, { Score: 11 });
    const first = await readAll(connector, ds, idle.cursor, 100);
    expect(first.records.map((r) => [r.id, r.fields[f.Score!]])).toEqual([[id, '11']]);

    clock.advance(20_000); // 12:00:35: last_edited_time stays 12:00:00
    sim.editPage(id, { Score: 12 });
    const second = await readAll(connector, ds, first.cursor, 100);
    expect(second.records.map((r) => [r.id, r.fields[f.Score!]])).toEqual([[id, '12']]);

    const third = await readAll(connector, ds, second.cursor, 100);
    expect(third.records).toEqual([]);

    clock.advance(10 * 60_000); // later edits of other pages still arrive
    const other = sim.workspace!.personIds[6]!;
    sim.editPage(other, { Name: 'Later edit' });
    const fourth = await readAll(connector, ds, third.cursor, 100);
    expect(fourth.records.map((r) => r.id)).toEqual([other]);
    expect(sim.requestLog.count({ status: 400 })).toBe(0);
  });

  it('turns ids-only webhook events into hints and reads a trashed page as deleted', async () => {
    const hook = await receiver();
    try {
      const sub = await sim.webhooks.subscribe({ url: hook.url });
      const handshake = hook.received[0]!.body;
      const verification = JSON.parse(handshake).verification_token as string;
      const withToken = createNotionConnector({
        token: sim.token,
        baseUrl: sim.url,
        webhookVerificationToken: verification,
        http: fast,
        rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
      });
      expect(withToken.parseWebhook({}, handshake)).toEqual([]);
      sim.webhooks.verify(sub.id, verification);
      const id = sim.workspace!.personIds[7]!;
      sim.trashPage(id);
      await sim.webhooks.flush();
      const event = hook.received.at(-1)!;
      expect(withToken.verifyWebhook(event.headers as Record<string, string>, event.body)).toBe(true);
      expect(connector.verifyWebhook(event.headers as Record<string, string>, event.body)).toBe(false); // no token
      expect(withToken.parseWebhook({}, event.body)).toEqual([
        { tableRemoteId: ds, recordId: id, deleted: true },
      ]);
      const fetched = await withToken.fetchPages(ds, [id]);
      expect(fetched).toEqual({ records: [], deletedIds: [id] });
    } finally {
      await hook.close();
    }
  });

  it('converts between Markdown and segments without drift', () => {
    const md = normalizeMarkdown('- one\n- **two**\n\n# Title\n\nA ~~gone~~ word');
    const segments = markdownToRichText(md);
    const back = richTextToMarkdown(
      segments.map((s) => ({ ...s, plain_text: s.text.content, href: s.text.link?.url })),
    );
    expect(back).toBe(md);
  });
});

describe('Notion connector pacing', () => {
  it('stays under Notion’s 3 requests per second without a single 429', async () => {
    const sim = await startNotionSimulator({ seed: { people: 3 }, rateLimit: { perSecond: 3, burst: 3 } });
    try {
      const connector = createNotionConnector({ token: sim.token, baseUrl: sim.url });
      const ds = sim.workspace!.peopleDataSourceId;
      const started = Date.now();
      for (let i = 0; i < 7; i++) await connector.read(ds, null, { pageSize: 10 });
      // describe (2 requests) + 7 queries = 9 requests at 3 per second: at least 2 seconds.
      expect(sim.requestLog.total).toBe(9);
      expect(sim.requestLog.count({ status: 429 })).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    } finally {
      await sim.close();
    }
  });

  it('waits out a 429 for the Retry-After seconds Notion gives', async () => {
    const sim = await startNotionSimulator({ seed: { people: 2 }, rateLimit: false });
    try {
      const waits: number[] = [];
      const connector = createNotionConnector({
        token: sim.token,
        baseUrl: sim.url,
        http: {
          sleep: async (ms) => {
            waits.push(ms);
          },
        },
      });
      const ds = sim.workspace!.peopleDataSourceId;
      await connector.describe(ds);
      sim.faults.next({ kind: 'rate_limit', count: 1 });
      const page = await connector.read(ds, null, { pageSize: 10 });
      expect(page.records).toHaveLength(2);
      expect(waits).toContain(1000);
    } finally {
      await sim.close();
    }
  });
});

describe('Notion connector: a property deleted under a live sync', () => {
  it('leaves it out of the records read (not read as emptied), so the runtime can stop the pair', async () => {
    const sim = await startNotionSimulator({ rateLimit: false, autoDeliverWebhooks: false });
    try {
      const ds = sim.workspace!.peopleDataSourceId;
      const connector = createNotionConnector({
        token: sim.token,
        baseUrl: sim.url,
        rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
        http: fast,
      });
      expect(connector.capabilities.recordsCarryEveryField).toBe(true);
      const ids = await fieldIds(connector, ds);
      const before = await connector.read(ds, null, { pageSize: 100 });
      expect(before.records[0]?.fields).toHaveProperty(ids.Notes as string);
      sim.state.removeProperty(ds, 'Notes');
      const after = await connector.read(ds, null, { pageSize: 100 });
      expect(after.records.length).toBeGreaterThan(0);
      for (const r of after.records) expect(r.fields).not.toHaveProperty(ids.Notes as string);
      expect(after.records[0]?.fields).toHaveProperty(ids.Name as string);
    } finally {
      await sim.close();
    }
  });
});

describe('Notion connector past the 10,000-result limit of a query', () => {
  // The simulator's limit lowered to 5 (Notion's is 10,000), with pages a minute apart: a scan and a
  // pass of changes must read every page, not end where the query stopped.
  it('reads a scan and a pass of changes past the limit, and says so when one minute holds more than it', async () => {
    const clock = new ManualClock('2026-01-15T12:00:00Z');
    const sim = await startNotionSimulator({
      clock,
      seed: { people: 0 },
      rateLimit: false,
      autoDeliverWebhooks: false,
      queryResultLimit: 5,
    });
    try {
      const connector = createNotionConnector({
        token: sim.token,
        baseUrl: sim.url,
        rateLimit: { scope: 'token', windows: [{ limit: 1000, windowMs: 1000 }] },
        http: fast,
      });
      const ds = sim.workspace!.peopleDataSourceId;
      const created: string[] = [];
      for (let i = 0; i < 12; i++) {
        created.push(sim.createPage(ds, { Name: `Person ${i}` }).id);
        clock.advance(60_000);
      }
      const scan = await readAll(connector, ds, null, 100);
      expect(new Set(scan.records.map((r) => r.id))).toEqual(new Set(created));
      expect(scan.pages.some((p) => p.scanComplete)).toBe(false);

      clock.advance(10 * 60_000);
      for (const id of created) {
        sim.editPage(id, { Name: `Edited ${id.slice(-4)}` });
        clock.advance(60_000);
      }
      const changes = await readAll(connector, ds, scan.cursor, 100);
      expect(new Set(changes.records.map((r) => r.id))).toEqual(new Set(created));

      // Six pages in one minute with a limit of five: no way past them, and the read says why.
      for (let i = 0; i < 6; i++) sim.createPage(ds, { Name: `Same minute ${i}` });
      const stuck = await readAll(connector, ds, null, 100).catch((e: unknown) => e);
      expect(stuck).toMatchObject({ code: 'validation' });
      expect((stuck as { userFacingMessage: string }).userFacingMessage).toMatch(/10,000 pages/);
    } finally {
      await sim.close();
    }
  });
});
