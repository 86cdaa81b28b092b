import type { CanonicalValue } from '@lockstep/engine';
import { type GoogleSheetsSimulator, ManualClock, startGoogleSheetsSimulator } from '@lockstep/simulators';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readAll, runConformanceSuite } from '../sdk/conformance';
import { createMemoryRateLimitStore } from '../sdk/rate-limiter';
import {
  createGoogleSheetsConnector,
  type GoogleSheetsConnector,
  type GoogleSheetsConnectorOptions,
  ID_COLUMN_KEY,
  ROW_ID_KEY,
  WRITE_TAG_KEY,
} from './google-sheets-connector';

type Fields = Record<string, CanonicalValue>;
const fast = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 2)));
let counter = 0;

function connectorFor(
  sim: GoogleSheetsSimulator,
  extra: Partial<GoogleSheetsConnectorOptions> = {},
): GoogleSheetsConnector {
  return createGoogleSheetsConnector({
    spreadsheetId: sim.sales?.spreadsheetId as string,
    baseUrl: sim.url,
    driveBaseUrl: sim.url,
    oauthBaseUrl: sim.url,
    accessToken: sim.token,
    rateLimit: false,
    http: { sleep: fast, baseDelayMs: 1, maxAttempts: 4 },
    ...extra,
  });
}

/** The index of the column Lockstep's column metadata marks as the id column (-1: none). */
function idColumnOf(sim: GoogleSheetsSimulator, spreadsheetId?: string, sheetId = 0): number {
  const state = sim.state.spreadsheet(spreadsheetId ?? (sim.sales?.spreadsheetId as string));
  const m = state.metadata.find(
    (x) => x.key === ID_COLUMN_KEY && x.loc.kind === 'COLUMN' && x.loc.sheet.sheetId === sheetId,
  );
  if (m?.loc.kind !== 'COLUMN') return -1;
  return m.loc.sheet.cols.indexOf(m.loc.col);
}

/** The data rows holding an id in the id column, in sheet order. */
function idRows(sim: GoogleSheetsSimulator, spreadsheetId?: string): { index: number; value: string }[] {
  const id = spreadsheetId ?? (sim.sales?.spreadsheetId as string);
  const col = idColumnOf(sim, id);
  if (col < 0) return [];
  return sim.values(id, 0).flatMap((r, index) => {
    const v = r[col];
    return index >= 1 && v !== undefined && v !== '' ? [{ index, value: String(v) }] : [];
  });
}

const rowOf = (sim: GoogleSheetsSimulator, id: string) => {
  const found = idRows(sim).find((r) => r.value === id);
  if (!found) throw new Error(`no row carries ${id}`);
  return found.index;
};

runConformanceSuite('Google Sheets (simulator)', async () => {
  // Quotas are off here (pacing is tested below); faults inject 429s instead.
  const sim = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 5 } });
  const ss = sim.sales?.spreadsheetId as string;
  const connector = connectorFor(sim);
  return {
    connector,
    tableId: '0',
    sampleFields(): Fields {
      counter += 1;
      return {
        Name: `Conformance ${counter}`,
        Email: `c${counter}@example.com`,
        Company: 'Initech',
        Stage: 'Lead',
        'Deal size': { minor: String(1000 * counter), code: 'USD' },
        'Signed up': '2026-02-03',
        Newsletter: counter % 2 === 0,
      };
    },
    async seed(count) {
      const names = Array.from({ length: count }, () => `Seeded ${++counter}`);
      sim.appendRows(
        ss,
        'Leads',
        names.map((n) => [n, `${n.replace(' ', '.').toLowerCase()}@example.com`, 'Acme Corp', 'Lead']),
      );
      // The rows get their ids from the connector's first read, as rows a person typed in would.
      const { records } = await readAll(connector, '0', null, 1000);
      return names.map((n) => {
        const r = records.find((x) => x.fields.Name === n);
        if (!r) throw new Error(`seeded row ${n} not read`);
        return r.id;
      });
    },
    async mutate(remoteId) {
      sim.editRow(ss, 'Leads', rowOf(sim, remoteId), { 0: 'Changed in Sheets', 3: 'Won' });
      return { Name: 'Changed in Sheets', Stage: 'Won' };
    },
    async remove(remoteId) {
      sim.deleteRows(ss, 'Leads', rowOf(sim, remoteId));
    },
    invalidFields: () => ({ Name: 'x'.repeat(50_001) }),
    async discover() {
      return (await connector.discover()).map((t) => ({
        remoteId: t.remoteId,
        fields: t.fields.map((f) => ({ remoteId: f.remoteId, fieldType: f.fieldType })),
      }));
    },
    async injectFailures(kind, count) {
      sim.faults.clear();
      if (count > 0)
        sim.faults.next(
          kind === 'rate_limited'
            ? { kind: 'rate_limit', count }
            : {
                status: 503,
                count,
                body: {
                  error: {
                    code: 503,
                    message: 'The service is currently unavailable.',
                    status: 'UNAVAILABLE',
                  },
                },
              },
        );
    },
    async badAuthConnector() {
      sim.state.tokens.add({
        token: 'ya29.soon-revoked',
        scopes: ['https://www.googleapis.com/auth/drive.file'],
        kind: 'oauth',
        userId: 'u',
      });
      sim.revokeToken('ya29.soon-revoked');
      return connectorFor(sim, { accessToken: 'ya29.soon-revoked' });
    },
    close: () => sim.close(),
  };
});

describe('Google Sheets connector specifics', () => {
  let sim: GoogleSheetsSimulator;
  let connector: GoogleSheetsConnector;
  let ss: string;
  beforeEach(async () => {
    sim = await startGoogleSheetsSimulator({ quota: false });
    ss = sim.sales?.spreadsheetId as string;
    connector = connectorFor(sim);
  });
  afterEach(() => sim.close());

  it('discovers sheets with types inferred from values and formats; formula columns are read-only', async () => {
    const tables = await connector.discover();
    expect(tables.map((t) => t.name)).toEqual(['Leads', 'Companies']);
    const leads = Object.fromEntries((tables[0]?.fields ?? []).map((f) => [f.remoteId, f.fieldType]));
    expect(leads).toEqual({
      Name: 'text',
      Email: 'email',
      Company: 'text',
      Stage: 'text',
      'Deal size': 'currency',
      'Signed up': 'date',
      Newsletter: 'boolean',
    });
    const companies = tables[1]?.fields ?? [];
    expect(companies.find((f) => f.remoteId === 'Revenue per employee')).toMatchObject({
      fieldType: 'currency',
      readOnly: true,
    });
    expect(companies.find((f) => f.remoteId === 'Founded')?.fieldType).toBe('date');
  });

  it('leaves a column out of the records once its header is renamed or cleared (not read as emptied)', async () => {
    expect(connector.capabilities.recordsCarryEveryField).toBe(true);
    const before = await connector.read('0', null, { pageSize: 10 });
    expect(before.records[0]?.fields).toHaveProperty('Deal size');
    // A person renames the header in the sheet, between two pages of a pass.
    const header = sim.values(ss, 'Leads')[0] as unknown[];
    const column = String.fromCharCode(65 + header.indexOf('Deal size'));
    sim.editCell(ss, 'Leads', `${column}1`, 'Deal value');
    const next = await connector.read('0', before.nextCursor, { pageSize: 10 });
    expect(next.records.length).toBeGreaterThan(0);
    for (const r of next.records) {
      expect(r.fields).not.toHaveProperty('Deal size');
      expect(r.fields).toHaveProperty('Deal value');
    }
  });

  it('reads canonical values: serial dates as ISO dates, currency in minor units, booleans', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    expect(records).toHaveLength(40);
    const raw = sim.values(ss, 'Leads');
    const first = records[0]?.fields as Fields;
    const serial = (raw[1] as unknown[])[5] as number;
    expect(first['Signed up']).toBe(
      new Date(Date.UTC(1899, 11, 30) + serial * 86_400_000).toISOString().slice(0, 10),
    );
    expect(first['Deal size']).toEqual({
      minor: String(Math.round(((raw[1] as unknown[])[4] as number) * 100)),
      code: 'USD',
    });
    expect(typeof first.Newsletter).toBe('boolean');
    // A lead without a deal size reads as null, not as 0.
    expect(records.some((r) => r.fields['Deal size'] === null)).toBe(true);
  });

  it('keeps row ids stable through inserts, deletes and reorders, and reports only real changes', async () => {
    const scan = await readAll(connector, '0', null, 15);
    // A scan over several pages: no page holds the whole sheet, so none says scanComplete.
    expect(scan.pages.some((p) => p.scanComplete)).toBe(false);
    expect((await connector.read('0', null, { pageSize: 100 })).scanComplete).toBe(true);
    const byName = new Map(scan.records.map((r) => [r.fields.Name, r.id]));
    expect(idRows(sim)).toHaveLength(40);

    // Nothing changed: the incremental pass re-reads and reports nothing.
    const quiet = await readAll(connector, '0', scan.cursor, 15);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);

    const victim = scan.records[10] as { id: string };
    const edited = scan.records[30] as { id: string; fields: Fields };
    sim.insertRows(ss, 'Leads', 3, [['Inserted Person', 'inserted@example.com', 'Hooli', 'Lead']]);
    sim.deleteRows(ss, 'Leads', rowOf(sim, victim.id));
    sim.moveRows(ss, 'Leads', 20, 5, 2);
    sim.sortRows(ss, 'Leads', 0);
    sim.editCell(ss, 'Leads', `D${rowOf(sim, edited.id) + 1}`, 'Proposal');

    const next = await readAll(connector, '0', quiet.cursor, 15);
    expect(next.deletedIds).toEqual([victim.id]);
    const changed = next.records.map((r) => r.fields.Name).sort();
    expect(changed).toEqual(['Inserted Person', edited.fields.Name].sort());
    expect(next.records.find((r) => r.id === edited.id)?.fields.Stage).toBe('Proposal');
    // Every other row kept its id wherever it moved.
    const full = await readAll(connector, '0', null, 100);
    for (const r of full.records) if (byName.has(r.fields.Name)) expect(r.id).toBe(byName.get(r.fields.Name));
  });

  it('notices rows shifting between pages of one pass and reads every row once', async () => {
    const page1 = await connector.read('0', null, { pageSize: 10 });
    sim.deleteRows(ss, 'Leads', 2, 3); // three rows above the cursor disappear
    sim.insertRows(ss, 'Leads', 1, [['Top Newcomer', 'top@example.com']]);
    sim.requestLog.reset();
    let cursor = page1.nextCursor;
    const ids = page1.records.map((r) => r.id);
    let pages = 0;
    for (let more = page1.hasMore; more; ) {
      const page = await connector.read('0', cursor, { pageSize: 10 });
      pages += 1;
      ids.push(...page.records.map((r) => r.id));
      cursor = page.nextCursor;
      more = page.hasMore;
      // And an empty row pushes everything down by one between pages.
      sim.insertRows(ss, 'Leads', 1, [[]]);
    }
    expect(new Set(ids).size).toBe(ids.length);
    const present = idRows(sim).map((r) => r.value);
    // Every row that still exists and existed when its position was passed was read.
    const missing = present.filter((id) => !ids.includes(id as string));
    expect(missing).toEqual([]);
    // The shift was found in the page's own answer (the window overlaps the previous page's last row):
    // one read per page, besides the one check read of each page that gave its new rows ids (the
    // ids written through the tags, one request per such page).
    const idWrites = sim.requestLog.count({ path: `/v4/spreadsheets/${ss}/values:batchUpdateByDataFilter` });
    expect(idWrites).toBeGreaterThan(0);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(pages + idWrites);
  });

  it('starts the pass over when the previous page’s last row is gone or moved far, still reading each row once', async () => {
    const page1 = await connector.read('0', null, { pageSize: 30 });
    expect(page1.hasMore).toBe(true);
    sim.deleteRows(ss, 'Leads', 1, 25); // the cursor's row moves 25 rows up, past the overlap
    const rest = await readAll(connector, '0', page1.nextCursor, 30);
    const ids = [...page1.records, ...rest.records].map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const present = idRows(sim).map((r) => r.value);
    expect(present.filter((id) => !ids.includes(id))).toEqual([]);
    expect(present).toHaveLength(15);
    // The deleted row that was the anchor: gone, and the next pass reports the deleted ones.
    const next = await readAll(connector, '0', rest.cursor, 100);
    expect(next.deletedIds).toHaveLength(25);
  });

  it('writes: creates append rows with ids and post-images; updates follow a moved row; deletes go bottom-up', async () => {
    await readAll(connector, '0', null, 100);
    const created = await connector.write('0', [
      {
        kind: 'create',
        fields: {
          Name: 'New A',
          'Signed up': '2026-03-04',
          Newsletter: true,
          'Deal size': { minor: '123456', code: 'USD' },
        },
        idempotencyKey: 'a',
      },
      { kind: 'create', fields: { Name: '=HYPERLINK("x")', Stage: 'TRUE' }, idempotencyKey: 'b' },
    ]);
    expect(created.every((r) => r.ok)).toBe(true);
    const [a, b] = created.map((r) => (r.ok ? r : undefined));
    expect(a?.postImage?.fields).toMatchObject({
      Name: 'New A',
      'Signed up': '2026-03-04',
      Newsletter: true,
      'Deal size': { minor: '123456', code: 'USD' },
    });
    // Text that looks like a formula or a boolean stays text.
    expect(b?.postImage?.fields).toMatchObject({ Name: '=HYPERLINK("x")', Stage: 'TRUE' });
    const rowA = rowOf(sim, a?.remoteId as string);
    expect((sim.values(ss, 'Leads')[rowA] as unknown[])[0]).toBe('New A');
    // The date cell shows as a date in the sheet, not a serial number.
    expect(sim.state.spreadsheet(ss).sheets[0]?.rows[rowA]?.cells[5]?.fmt?.type).toBe('DATE');

    sim.insertRows(ss, 'Leads', 1, [['Someone typed this']]);
    const [updated] = await connector.write('0', [
      { kind: 'update', remoteId: a?.remoteId as string, fields: { Stage: 'Won' }, idempotencyKey: 'u' },
    ]);
    expect(updated?.ok && updated.postImage?.fields).toMatchObject({
      Name: 'New A',
      Stage: 'Won',
      Newsletter: true,
    });
    expect((sim.values(ss, 'Leads')[rowA + 1] as unknown[])[3]).toBe('Won');

    const targets = idRows(sim).slice(0, 4);
    const names = targets.map((t) => (sim.values(ss, 'Leads')[t.index] as unknown[])[0]);
    const before = sim.values(ss, 'Leads').length;
    sim.requestLog.reset();
    const removed = await connector.write(
      '0',
      targets.map((t, i) => ({
        kind: 'delete' as const,
        remoteId: t.value as string,
        idempotencyKey: `d${i}`,
      })),
    );
    expect(removed.every((r) => r.ok)).toBe(true);
    // The tags, then the deletes (the tags go with their rows).
    expect(sim.requestLog.count({ method: 'POST', path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(2);
    const after = sim.values(ss, 'Leads');
    expect(after).toHaveLength(before - 4);
    for (const n of names) expect(after.some((r) => r[0] === n)).toBe(false);
    // Deleting again is a success (replay), and updating a deleted row fails that item alone.
    const replay = await connector.write('0', [
      { kind: 'delete', remoteId: targets[0]?.value as string, idempotencyKey: 'd0' },
      {
        kind: 'update',
        remoteId: targets[1]?.value as string,
        fields: { Stage: 'Lost' },
        idempotencyKey: 'u2',
      },
      { kind: 'update', remoteId: b?.remoteId as string, fields: { Stage: 'Lost' }, idempotencyKey: 'u3' },
      { kind: 'update', remoteId: b?.remoteId as string, fields: { Nope: 'x' }, idempotencyKey: 'u4' },
    ]);
    expect(replay.map((r) => r.ok)).toEqual([true, false, true, false]);
    expect(replay[1]?.ok === false && replay[1].error.code).toBe('not_found');
    expect(replay[3]?.ok === false && replay[3].error.code).toBe('validation');
  });

  it('splits large writes to stay under the 2 MB recommended payload', async () => {
    sim.state.payloads.length = 0;
    const results = await connector.write(
      '0',
      Array.from({ length: 120 }, (_, i) => ({
        kind: 'create' as const,
        fields: { Name: `Bulk ${i}`, Stage: 'y'.repeat(40_000) },
        idempotencyKey: `bulk-${i}`,
      })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    // One atomic batchUpdate per chunk (rows, values and tags together), never an append.
    const batches = sim.state.payloads.filter((p) => p.path.endsWith(':batchUpdate'));
    expect(batches.length).toBeGreaterThanOrEqual(3);
    expect(sim.state.payloads.filter((p) => p.path.endsWith(':append'))).toEqual([]);
    for (const p of sim.state.payloads) expect(p.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(new Set(results.map((r) => (r.ok ? r.remoteId : ''))).size).toBe(120);
    const rows = idRows(sim);
    expect(rows).toHaveLength(120);
    // The new rows follow the seeded table in order, right after its last row.
    expect(rows.map((r) => (sim.values(ss, 'Leads')[r.index] as unknown[])[0])).toEqual(
      Array.from({ length: 120 }, (_, i) => `Bulk ${i}`),
    );
    expect(rows[0]?.index).toBe(41);
  });

  it('spends one request per create batch and one per page read, the schema riding on the first', async () => {
    sim.requestLog.reset();
    const rows = 450;
    for (let i = 0; i < rows; i += 200) {
      const results = await connector.write(
        '0',
        Array.from({ length: Math.min(200, rows - i) }, (_, j) => ({
          kind: 'create' as const,
          fields: {
            Name: `Batch ${i + j}`,
            'Signed up': `2026-05-0${(j % 9) + 1}`,
            Newsletter: j % 2 === 0,
          },
          idempotencyKey: `batch-${i + j}`,
        })),
      );
      expect(results.every((r) => r.ok)).toBe(true);
    }
    // One read for the schema (and where the table ends) and one batchUpdate adding the id column;
    // then per batch one read of the id column (a retried create finds its rows) and one batchUpdate.
    expect(sim.requestLog.byPath()).toEqual({
      [`POST /v4/spreadsheets/${ss}:getByDataFilter`]: 1 + 3,
      [`POST /v4/spreadsheets/${ss}:batchUpdate`]: 1 + 3,
    });
    // A scan: one request per page (the schema comes with the first), and the page that reaches the
    // end of the data ends the pass. The seeded rows get their ids on this pass, through tags: the
    // tag, the check, the write through the tags and the untag.
    sim.requestLog.reset();
    const first = await readAll(connector, '0', null, 100);
    expect(first.records).toHaveLength(40 + rows);
    expect(first.pages).toHaveLength(5);
    expect(sim.requestLog.byPath()).toEqual({
      [`POST /v4/spreadsheets/${ss}:getByDataFilter`]: 5 + 1,
      [`POST /v4/spreadsheets/${ss}:batchUpdate`]: 2,
      [`POST /v4/spreadsheets/${ss}/values:batchUpdateByDataFilter`]: 1,
    });
    // A quiet incremental pass reads growing windows until the end: a few requests, nothing written.
    sim.requestLog.reset();
    const second = await readAll(connector, '0', first.cursor, 100);
    expect(second.records).toEqual([]);
    expect(sim.requestLog.total).toBeLessThanOrEqual(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(
      sim.requestLog.total,
    );
    // Dates written as serial numbers show as dates, in the column's own format.
    const at = rowOf(sim, (first.records.find((r) => r.fields.Name === 'Batch 3') as { id: string }).id);
    expect(sim.state.spreadsheet(ss).sheets[0]?.rows[at]?.cells[5]?.fmt).toEqual({
      type: 'DATE',
      pattern: 'm/d/yyyy',
    });
    expect(first.records.find((r) => r.fields.Name === 'Batch 3')?.fields).toMatchObject({
      'Signed up': '2026-05-04',
      Newsletter: false,
    });
  });

  it('turns a retried create into a lookup: a batch with rows made before creates only the new ones', async () => {
    const batch = (keys: string[]) =>
      connector.write(
        '0',
        keys.map((k) => ({ kind: 'create' as const, fields: { Name: `Retry ${k}` }, idempotencyKey: k })),
      );
    const first = await batch(['x1', 'x2']);
    sim.requestLog.reset();
    const again = await batch(['x1', 'x3', 'x2', 'x3']);
    expect(again.map((r) => r.ok && r.remoteId)).toEqual([
      first[0]?.ok && first[0].remoteId,
      expect.any(String),
      first[1]?.ok && first[1].remoteId,
      again[1]?.ok && again[1].remoteId,
    ]);
    expect(again[0]?.ok && again[0].postImage?.fields.Name).toBe('Retry x1');
    const names = sim
      .values(ss, 'Leads')
      .map((r) => r[0])
      .filter((n) => String(n).startsWith('Retry'));
    expect(names.sort()).toEqual(['Retry x1', 'Retry x2', 'Retry x3']);
    // The ids already in the id column were answered from their rows; one batchUpdate made x3.
    expect(sim.requestLog.count({ status: 400 })).toBe(0);
    expect(sim.requestLog.byPath()).toEqual({
      [`POST /v4/spreadsheets/${ss}:getByDataFilter`]: 2,
      [`POST /v4/spreadsheets/${ss}:batchUpdate`]: 1,
    });
  });

  it('keeps ids in a hidden, warning-only protected id column that is neither a field nor writable', async () => {
    await readAll(connector, '0', null, 100);
    const col = idColumnOf(sim);
    // After the last header column (Newsletter is G), headed "Lockstep ID".
    expect(col).toBe(7);
    expect((sim.values(ss, 'Leads')[0] as unknown[])[col]).toBe('Lockstep ID');
    const sheet = sim.state.sheet(ss, 'Leads');
    expect(sheet.cols[col]?.hiddenByUser).toBe(true);
    const got = await fetch(
      `${sim.url}/v4/spreadsheets/${ss}?fields=${encodeURIComponent('sheets(properties(sheetId),protectedRanges)')}`,
      { headers: { authorization: `Bearer ${sim.token}` } },
    );
    const body = (await got.json()) as {
      sheets: { protectedRanges?: { range: unknown; warningOnly?: boolean; description?: string }[] }[];
    };
    expect(body.sheets[0]?.protectedRanges).toEqual([
      expect.objectContaining({
        range: { sheetId: 0, startColumnIndex: col, endColumnIndex: col + 1 },
        warningOnly: true,
        description: expect.stringContaining('Lockstep keeps row ids here'),
      }),
    ]);
    // One developer metadata entry for the whole sheet, none per row.
    expect(sim.state.spreadsheet(ss).metadata.map((m) => m.key)).toEqual([ID_COLUMN_KEY]);
    const [leads] = await connector.discover();
    expect(leads?.fields.map((f) => f.remoteId)).not.toContain('Lockstep ID');
    const { records } = await connector.read('0', null, { pageSize: 5 });
    for (const r of records) expect(Object.keys(r.fields)).not.toContain('Lockstep ID');
    const [bad] = await connector.write('0', [
      {
        kind: 'update',
        remoteId: records[0]?.id as string,
        fields: { 'Lockstep ID': 'x' },
        idempotencyKey: 'i',
      },
    ]);
    expect(bad?.ok === false && bad.error.code).toBe('validation');
    expect(rowOf(sim, records[0]?.id as string)).toBe(1);
  });

  it('recovers when the table end it knew is gone (rows deleted in the sheet) and appends after a long unread table', async () => {
    const long = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 150 } });
    try {
      const c = connectorFor(long, { sampleRows: 20 });
      const lss = long.sales?.spreadsheetId as string;
      // The table is longer than the sample and was never read: Google's append finds its end.
      long.requestLog.reset();
      const [a] = await c.write('0', [
        { kind: 'create', fields: { Name: 'After the table' }, idempotencyKey: 'a' },
      ]);
      expect(a?.ok).toBe(true);
      expect(long.requestLog.count({ path: /:append$/ })).toBe(1);
      expect(idRows(long, lss)[0]?.index).toBe(151);
      // From then on it knows the end: one batchUpdate.
      long.requestLog.reset();
      await c.write('0', [{ kind: 'create', fields: { Name: 'Next' }, idempotencyKey: 'b' }]);
      expect(long.requestLog.byPath()).toEqual({
        [`POST /v4/spreadsheets/${lss}:getByDataFilter`]: 1,
        [`POST /v4/spreadsheets/${lss}:batchUpdate`]: 1,
      });
      expect((long.values(lss, 'Leads')[152] as unknown[])[0]).toBe('Next');
      // People delete the rows at the end and shrink the grid below the row it would insert at.
      const grid = long.state.sheet(lss, 'Leads');
      long.deleteRows(lss, 'Leads', 100, grid.rows.length - 100);
      long.requestLog.reset();
      const [d] = await c.write('0', [{ kind: 'create', fields: { Name: 'Later' }, idempotencyKey: 'd' }]);
      expect(d?.ok).toBe(true);
      // The id column lookup before the create reads the grid's size again: placed at the end of
      // what is left, without a refused request.
      expect(long.requestLog.count({ status: 400 })).toBe(0);
      const values = long.values(lss, 'Leads');
      expect(values.filter((r) => r[0] === 'Later')).toHaveLength(1);
      expect((values[100] as unknown[])[0]).toBe('Later');
    } finally {
      await long.close();
    }
  });

  it('lists spreadsheets through Drive (drive.file sees only the granted ones)', async () => {
    expect(await connector.listSpreadsheets()).toEqual([{ id: ss, name: 'Sales pipeline' }]);
    const wide = connectorFor(sim, { accessToken: sim.driveToken });
    expect((await wide.listSpreadsheets()).map((f) => f.name).sort()).toEqual([
      'Budget 2026 (not shared with the app)',
      'Sales pipeline',
    ]);
    const hidden = createGoogleSheetsConnector({
      spreadsheetId: sim.sales?.privateSpreadsheetId as string,
      baseUrl: sim.url,
      accessToken: sim.token,
      rateLimit: false,
    });
    await expect(hidden.check()).rejects.toMatchObject({ code: 'permission_denied' });
  });

  it('refreshes an expired access token with the refresh token', async () => {
    const auth = await fetch(
      `${sim.url}/o/oauth2/v2/auth?client_id=lockstep-simulator.apps.googleusercontent.com&redirect_uri=http://localhost/cb&response_type=code&access_type=offline&scope=${encodeURIComponent('https://www.googleapis.com/auth/drive.file')}`,
      { redirect: 'manual' },
    );
    const code = new URL(auth.headers.get('location') as string).searchParams.get('code') as string;
    const tokens = (await (
      await fetch(`${sim.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          client_id: 'lockstep-simulator.apps.googleusercontent.com',
          client_secret: 'GOCSPX-simulator',
          redirect_uri: 'http://localhost/cb',
        }),
      })
    ).json()) as { refresh_token: string };
    const oauth = connectorFor(sim, {
      accessToken: undefined,
      oauth: {
        clientId: 'lockstep-simulator.apps.googleusercontent.com',
        clientSecret: 'GOCSPX-simulator',
        refreshToken: tokens.refresh_token,
      },
    });
    expect((await oauth.read('0', null, { pageSize: 5 })).records).toHaveLength(5);
    sim.state.expireAccessTokens();
    expect((await oauth.read('0', null, { pageSize: 5 })).records).toHaveLength(5);
    // The code exchange above, the first refresh, and one refresh after the expiry (not one per request).
    expect(sim.requestLog.count({ path: '/token' })).toBe(3);
    expect(sim.requestLog.count({ status: 401 })).toBe(1);
  });
});

describe('Google Sheets quota', () => {
  let sim: GoogleSheetsSimulator;
  afterAll(() => sim?.close());

  it('paces reads under 60 per minute per user with the SDK RateLimiter and never meets a 429', async () => {
    const clock = new ManualClock();
    sim = await startGoogleSheetsSimulator({ clock, quota: {} });
    let slept = 0;
    const sleep = async (ms: number) => {
      slept += ms;
      clock.advance(ms);
    };
    const connector = connectorFor(sim, {
      rateLimit: undefined,
      rateLimitStore: createMemoryRateLimitStore({ now: () => clock.now() }),
      maxQuotaWaitMs: 120_000,
      http: { sleep, baseDelayMs: 1000, maxAttempts: 4 },
    });
    expect(connector.capabilities.rateLimit).toEqual({
      scope: 'user',
      windows: [{ limit: 60, windowMs: 60_000 }],
    });
    // Many small pages, two scans: well over 60 reads (one per page).
    const { records } = await readAll(connector, '0', null, 1);
    expect(records).toHaveLength(40);
    expect((await readAll(connector, '0', null, 1)).records).toHaveLength(40);
    const reads =
      sim.requestLog.count({ method: 'GET' }) +
      sim.requestLog.count({ path: /developerMetadata:search$|:getByDataFilter$/ });
    expect(reads).toBeGreaterThan(60);
    expect(sim.requestLog.count({ status: 429 })).toBe(0);
    expect(slept).toBeGreaterThanOrEqual(60_000);
  });

  it('backs off exponentially on 429 RESOURCE_EXHAUSTED and maps a persistent one to rate_limited', async () => {
    const delays: number[] = [];
    const connector = connectorFor(sim, {
      http: {
        sleep: async (ms) => void delays.push(ms),
        baseDelayMs: 1000,
        maxAttempts: 4,
        random: () => 0.999,
      },
    });
    sim.state.resetQuotas();
    sim.faults.next({ kind: 'rate_limit', count: 2 });
    expect((await connector.read('0', null, { pageSize: 3 })).records).toHaveLength(3);
    expect(delays.slice(0, 2)).toEqual([999, 1998]);
    sim.faults.next({ kind: 'rate_limit', count: 50 });
    await expect(connector.read('0', null, { pageSize: 3 })).rejects.toMatchObject({ code: 'rate_limited' });
    sim.faults.clear();
  });
});

describe('Google Sheets id column', () => {
  let sim: GoogleSheetsSimulator;
  let connector: GoogleSheetsConnector;
  let ss: string;
  beforeEach(async () => {
    sim = await startGoogleSheetsSimulator({ quota: false });
    ss = sim.sales?.spreadsheetId as string;
    connector = connectorFor(sim);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    return sim.close();
  });

  /** Hooks run ahead of matching requests (a person acting then); one fetch spy serves them all. */
  let hooks: { match: (url: string, body: string) => boolean; times: number; before: () => void }[] = [];
  function hook(match: (url: string, body: string) => boolean, times: number, before: () => void) {
    if (!hooks.length) {
      const real = globalThis.fetch;
      vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
        const body = typeof init?.body === 'string' ? init.body : '';
        for (const h of hooks)
          if (h.times > 0 && h.match(String(input), body)) {
            h.times -= 1;
            h.before();
          }
        return real(input, init);
      });
    }
    hooks.push({ match, times, before });
  }
  afterEach(() => {
    hooks = [];
  });

  /** Calls `before` ahead of the first `times` requests whose URL contains `part`. */
  const beforeRequests = (part: string, times: number, before: () => void) =>
    hook((url) => url.includes(part), times, before);

  /**
   * Calls `before` ahead of the first write request (of any kind) after the connector read where its
   * rows are: the moment between finding rows and writing them.
   */
  const beforeFirstWrite = (before: () => void) =>
    hook((url) => url.endsWith(':batchUpdate') || url.includes('/values:batchUpdate'), 1, before);

  /** Calls `before` ahead of the first `times` batchUpdates that create write tags. */
  const beforeTagging = (times: number, before: () => void) =>
    hook(
      (url, body) =>
        url.endsWith(':batchUpdate') &&
        body.includes(WRITE_TAG_KEY) &&
        body.includes('createDeveloperMetadata'),
      times,
      before,
    );

  it('names the id column "Lockstep ID 2" when a column of the sheet is already called "Lockstep ID"', async () => {
    sim.editCell(ss, 'Leads', 'D1', 'Lockstep ID');
    const { records } = await readAll(connector, '0', null, 100);
    const col = idColumnOf(sim);
    expect(col).toBe(7);
    expect((sim.values(ss, 'Leads')[0] as unknown[])[col]).toBe('Lockstep ID 2');
    // The person's own "Lockstep ID" column stays a field.
    expect(records[0]?.fields).toHaveProperty('Lockstep ID');
    expect(Object.keys(records[0]?.fields ?? {})).not.toContain('Lockstep ID 2');
  });

  it('syncs a sheet of 5,000 rows: ids go in the column, no metadata limit error, ids stable across reads', async () => {
    const big = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 5000 } });
    try {
      const bss = big.sales?.spreadsheetId as string;
      const c = connectorFor(big);
      const first = await readAll(c, '0', null, 1000);
      expect(first.records).toHaveLength(5000);
      expect(new Set(first.records.map((r) => r.id)).size).toBe(5000);
      expect(big.requestLog.count({ status: 400 })).toBe(0);
      // Every row's id sits in its id cell; the sheet holds one metadata entry, whatever its size.
      const rows = idRows(big, bss);
      expect(rows).toHaveLength(5000);
      expect(rows.every((r) => /^[A-Za-z0-9_-]{12}$/.test(r.value))).toBe(true);
      expect(big.state.spreadsheet(bss).metadata.map((m) => m.key)).toEqual([ID_COLUMN_KEY]);
      // A quiet incremental pass reports nothing; a fresh connector reads the same ids.
      const quiet = await readAll(c, '0', first.cursor, 1000);
      expect(quiet.records).toEqual([]);
      expect(quiet.deletedIds).toEqual([]);
      const again = await readAll(connectorFor(big), '0', null, 1000);
      expect(again.records.map((r) => r.id)).toEqual(first.records.map((r) => r.id));
    } finally {
      await big.close();
    }
    // 5,000 rows through the simulator: seconds on a loaded CI machine, past the unit default of 5 s.
  }, 60_000);

  it('keeps every id when people insert rows above, sort the sheet and move the id column', async () => {
    const scan = await readAll(connector, '0', null, 15);
    const byEmail = new Map(scan.records.map((r) => [r.fields.Email, r.id]));
    sim.insertRows(ss, 'Leads', 1, [
      ['Above One', 'above1@example.com', 'Hooli', 'Lead'],
      ['Above Two', 'above2@example.com', 'Hooli', 'Lead'],
    ]);
    sim.sortRows(ss, 'Leads', 1, false);
    const col = idColumnOf(sim);
    sim.moveColumns(ss, 'Leads', col, 1, 0);
    expect(idColumnOf(sim)).toBe(0);
    const next = await readAll(connector, '0', scan.cursor, 15);
    expect(next.deletedIds).toEqual([]);
    expect(next.records.map((r) => r.fields.Name).sort()).toEqual(['Above One', 'Above Two']);
    const full = await readAll(connector, '0', null, 100);
    expect(full.records).toHaveLength(42);
    for (const r of full.records)
      if (byEmail.has(r.fields.Email)) expect(r.id).toBe(byEmail.get(r.fields.Email));
    expect(Object.keys(full.records[0]?.fields ?? {})).not.toContain('Lockstep ID');
    // Writes follow the moved column too.
    const target = full.records.find((r) => r.fields.Name === 'Above One') as { id: string };
    const [u] = await connector.write('0', [
      { kind: 'update', remoteId: target.id, fields: { Stage: 'Won' }, idempotencyKey: 'u' },
    ]);
    expect(u?.ok).toBe(true);
    const row = sim.values(ss, 'Leads')[rowOf(sim, target.id)] as unknown[];
    expect(row[0]).toBe(target.id);
    expect(row[1]).toBe('Above One');
    expect(row[4]).toBe('Won');
  });

  it('makes a copied row (a duplicate id) a new record; the original keeps its id', async () => {
    const scan = await readAll(connector, '0', null, 15);
    const original = scan.records[4] as { id: string; fields: Fields };
    const at = rowOf(sim, original.id);
    const copy = sim.values(ss, 'Leads')[at] as unknown[];
    expect(copy).toContain(original.id);
    // Pasted on a later page than the original, id cell included.
    sim.insertRows(ss, 'Leads', 30, [copy]);
    const next = await readAll(connector, '0', scan.cursor, 15);
    expect(next.deletedIds).toEqual([]);
    expect(next.records).toHaveLength(1);
    const made = next.records[0] as { id: string; fields: Fields };
    expect(made.id).not.toBe(original.id);
    expect(made.fields.Name).toBe(original.fields.Name);
    expect(rowOf(sim, original.id)).toBe(at);
    expect(rowOf(sim, made.id)).toBe(30);
    const ids = idRows(sim).map((r) => r.value);
    expect(new Set(ids).size).toBe(41);
    // From now on both are quiet.
    const quiet = await readAll(connector, '0', next.cursor, 15);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
  });

  /** Each data row's cells by the id it carries. */
  function rowsById(): Map<string, unknown[]> {
    const values = sim.values(ss, 'Leads') as unknown[][];
    return new Map(idRows(sim).map((r) => [r.value, values[r.index] as unknown[]]));
  }

  const writeTags = () => sim.state.rowsWithMetadata(ss, WRITE_TAG_KEY);

  /** The ids sent to id cells through tags (values:batchUpdateByDataFilter bodies of reads). */
  function idWrites(): string[] {
    const ids: string[] = [];
    hook(
      (url, body) => {
        if (url.includes('/values:batchUpdateByDataFilter'))
          for (const d of JSON.parse(body).data as { values: unknown[][] }[])
            ids.push(...(d.values[0] ?? []).filter((v): v is string => typeof v === 'string'));
        return false;
      },
      1,
      () => {},
    );
    return ids;
  }

  it('gives rows typed in their ids through tags: rows shifting before the id write move no id onto another row', async () => {
    const first = await readAll(connector, '0', null, 100);
    expect(first.records).toHaveLength(40);
    const before = rowsById();
    // A person types three rows between existing ones (empty id cells).
    sim.insertRows(ss, 'Leads', 30, [['New C', 'c@example.com', 'Hooli', 'Lead']]);
    sim.insertRows(ss, 'Leads', 12, [['New B', 'b@example.com', 'Hooli', 'Lead']]);
    sim.insertRows(ss, 'Leads', 5, [['New A', 'a@example.com', 'Hooli', 'Lead']]);
    const sent = idWrites();
    sim.requestLog.reset();
    // Between the page read and the first write a person types a row where New A was: the rows
    // from there move down by one, so New A's place now holds that row (no id either, other
    // cells), New B's and New C's the existing rows above them.
    beforeFirstWrite(() => sim.insertRows(ss, 'Leads', 5, [['Typed during']]));
    const next = await readAll(connector, '0', first.cursor, 100);
    expect(next.deletedIds).toEqual([]);
    expect(next.records.map((r) => r.fields.Name).sort()).toEqual(['New A', 'New B', 'New C']);
    // Every existing row keeps its id and cells.
    const after = rowsById();
    for (const [id, row] of before) expect(after.get(id)).toEqual(row);
    // Every new row carries the id the read reported for it.
    const values = sim.values(ss, 'Leads') as unknown[][];
    for (const r of next.records) expect(values[rowOf(sim, r.id)]?.[0]).toBe(r.fields.Name);
    // No id written twice: each new id sent once, 43 distinct ids on 43 rows.
    expect(sent.sort()).toEqual(next.records.map((r) => r.id).sort());
    const ids = idRows(sim).map((r) => r.value);
    expect(ids).toHaveLength(43);
    expect(new Set(ids).size).toBe(43);
    // The row typed during the read has no id yet, and no tag is left.
    expect(values[5]).toEqual(['Typed during']);
    expect(values[6]?.[0]).toBe('New A');
    expect(writeTags()).toEqual([]);
    // Page, tag (misplaced), check, tag again, check, write through the tags, untag; and one read
    // of the row the grid grew by (the insert) past the end the page had read to.
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(3 + 1);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}/values:batchUpdateByDataFilter` })).toBe(1);
    // The next read gives that row its id; nothing else changes.
    const later = await readAll(connector, '0', next.cursor, 100);
    expect(later.deletedIds).toEqual([]);
    expect(later.records.map((r) => r.fields.Name)).toEqual(['Typed during']);
    expect(new Set(idRows(sim).map((r) => r.value)).size).toBe(44);
  });

  it('gives a copied row a fresh id without touching the original’s when rows shift before the id write', async () => {
    const scan = await readAll(connector, '0', null, 100);
    const original = scan.records[10] as { id: string; fields: Fields };
    const at = rowOf(sim, original.id);
    const before = rowsById();
    // Pasted right below the original, id cell included.
    sim.insertRows(ss, 'Leads', at + 1, [sim.values(ss, 'Leads')[at] as unknown[]]);
    const sent = idWrites();
    // Between the page read and the first write the rows move down by one: the copy's place now
    // holds the original (same cells, same id).
    beforeFirstWrite(() => sim.insertRows(ss, 'Leads', 1, [['Typed during']]));
    const next = await readAll(connector, '0', scan.cursor, 100);
    expect(next.deletedIds).toEqual([]);
    expect(next.records).toHaveLength(1);
    const made = next.records[0] as { id: string; fields: Fields };
    expect(made.id).not.toBe(original.id);
    expect(made.fields).toEqual(original.fields);
    expect(sent).toEqual([made.id]);
    // The original keeps its id (one row down now); the copy below it carries the new one.
    expect(rowOf(sim, original.id)).toBe(at + 1);
    expect(rowOf(sim, made.id)).toBe(at + 2);
    const after = rowsById();
    for (const [id, row] of before) expect(after.get(id)).toEqual(row);
    const ids = idRows(sim).map((r) => r.value);
    expect(ids).toHaveLength(41);
    expect(new Set(ids).size).toBe(41);
    expect(writeTags()).toEqual([]);
  });

  it('leaves a new row without an id, and out of the page, while it keeps moving under its tag', async () => {
    const first = await readAll(connector, '0', null, 100);
    sim.insertRows(ss, 'Leads', 20, [['New row', 'n@example.com', 'Hooli', 'Lead']]);
    const before = rowsById();
    // Rows move down by one before each of the three tagging rounds.
    beforeTagging(3, () => sim.insertRows(ss, 'Leads', 1, [['Typed during']]));
    sim.requestLog.reset();
    const next = await readAll(connector, '0', first.cursor, 100);
    expect(next.records).toEqual([]);
    expect(next.deletedIds).toEqual([]);
    expect(rowsById()).toEqual(before);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}/values:batchUpdateByDataFilter` })).toBe(0);
    expect(writeTags()).toEqual([]);
    // The next read gives it (and the rows typed meanwhile) an id.
    const later = await readAll(connector, '0', next.cursor, 100);
    expect(later.records.map((r) => r.fields.Name).sort()).toEqual([
      'New row',
      'Typed during',
      'Typed during',
      'Typed during',
    ]);
    expect(new Set(idRows(sim).map((r) => r.value)).size).toBe(44);
  });

  it('lands updates on their rows, and on no other, when rows are inserted after the id-column read and again before the write', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const targets = [records[3], records[20], records[21], records[35]] as { id: string; fields: Fields }[];
    const before = rowsById();
    sim.requestLog.reset();
    // Between the connector's id-column read and its first write (the tags): the rows it found move
    // down by one.
    beforeFirstWrite(() => sim.insertRows(ss, 'Leads', 1, [['Typed before the tag']]));
    // And right before the values are written.
    beforeRequests('/values:batchUpdate', 1, () =>
      sim.insertRows(ss, 'Leads', 2, [['Typed before the write']]),
    );
    const results = await connector.write(
      '0',
      targets.map((t, k) => ({
        kind: 'update' as const,
        remoteId: t.id,
        fields: { Stage: `Stage ${k}` },
        idempotencyKey: `u${k}`,
      })),
    );
    for (const [k, r] of results.entries()) {
      expect(r.ok && r.postImage?.fields).toMatchObject({
        Name: targets[k]?.fields.Name,
        Stage: `Stage ${k}`,
      });
    }
    const after = rowsById();
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [id, row] of before) {
      const k = targets.findIndex((t) => t.id === id);
      const expected = [...row];
      if (k >= 0) expected[3] = `Stage ${k}`;
      expect(after.get(id)).toEqual(expected);
    }
    const values = sim.values(ss, 'Leads') as unknown[][];
    expect(values[1]).toEqual(['Typed before the tag']);
    expect(values[2]).toEqual(['Typed before the write']);
    expect(writeTags()).toEqual([]);
    // Read, tag (on the wrong rows), check, tag again, check, write, untag.
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}/values:batchUpdateByDataFilter` })).toBe(1);
  });

  it('spends five requests on an update batch and tags at most 400 rows at once', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const target = records[7] as { id: string };
    sim.requestLog.reset();
    const [u] = await connector.write('0', [
      { kind: 'update', remoteId: target.id, fields: { Stage: 'Won' }, idempotencyKey: 'u' },
    ]);
    expect(u?.ok).toBe(true);
    // The id-column read, the tags, the check, the write through the tags, the untag.
    expect(sim.requestLog.count({})).toBe(5);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(2);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(2);
    expect(writeTags()).toEqual([]);

    const big = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 900 } });
    try {
      const c = connectorFor(big);
      const all = await readAll(c, '0', null, 1000);
      expect(all.records).toHaveLength(900);
      const tagged: number[] = [];
      hook(
        (url, body) => {
          if (url.endsWith(':batchUpdate') && body.includes('createDeveloperMetadata'))
            tagged.push(body.split('createDeveloperMetadata').length - 1);
          return false;
        },
        1,
        () => {},
      );
      const results = await c.write(
        '0',
        all.records.map((r, k) => ({
          kind: 'update' as const,
          remoteId: r.id,
          fields: { Stage: `S${k}` },
          idempotencyKey: `b${k}`,
        })),
      );
      expect(results.every((r) => r.ok)).toBe(true);
      expect(tagged).toEqual([400, 400, 100]);
      const bigSs = big.sales?.spreadsheetId as string;
      expect(big.state.rowsWithMetadata(bigSs, WRITE_TAG_KEY)).toEqual([]);
      expect((big.values(bigSs, 'Leads') as unknown[][]).slice(1).map((r) => r[3])).toEqual(
        all.records.map((_, k) => `S${k}`),
      );
    } finally {
      await big.close();
    }
  });

  it('reports a retryable error, writing nothing, when the rows keep moving under the tags', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const target = records[20] as { id: string };
    const before = rowsById();
    sim.requestLog.reset(); // the read wrote the rows' new ids through tags
    beforeTagging(3, () => sim.insertRows(ss, 'Leads', 1, [['Typed during']]));
    const [u] = await connector.write('0', [
      { kind: 'update', remoteId: target.id, fields: { Stage: 'Negotiation' }, idempotencyKey: 'u1' },
    ]);
    expect(u?.ok === false && u.error.code).toBe('transient');
    expect(rowsById()).toEqual(before);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}/values:batchUpdateByDataFilter` })).toBe(0);
    expect(writeTags()).toEqual([]);
  });

  it('deletes the intended rows, and no other, when rows are inserted between the id-column read and the first write', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const targets = [records[2], records[3], records[30]] as { id: string; fields: Fields }[];
    const before = rowsById();
    beforeFirstWrite(() => sim.insertRows(ss, 'Leads', 1, [['Typed above']]));
    const results = await connector.write(
      '0',
      targets.map((t, k) => ({ kind: 'delete' as const, remoteId: t.id, idempotencyKey: `d${k}` })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const after = rowsById();
    const kept = [...before].filter(([id]) => !targets.some((t) => t.id === id));
    expect([...after.entries()].sort()).toEqual(kept.sort());
    expect((sim.values(ss, 'Leads') as unknown[][])[1]).toEqual(['Typed above']);
    expect(writeTags()).toEqual([]);
  });

  /** The number formats of a row's cells (undefined: none), by column. */
  const formatsOf = (index: number) =>
    sim.state.sheet(ss, 'Leads').rows[index]?.cells.map((c) => c?.fmt) ?? [];

  it('puts back the row a delete hit instead of its target when rows shift in the one request before it (the gap Sheets leaves)', async () => {
    const first = await readAll(connector, '0', null, 100);
    const target = first.records[20] as { id: string };
    const above = first.records[19] as { id: string };
    const before = rowsById();
    const formatsAbove = formatsOf(rowOf(sim, above.id));
    expect(formatsAbove.some((f) => f !== undefined)).toBe(true); // dates and amounts are formatted
    sim.requestLog.reset();
    // After the checked read, right before the deleteDimension: nothing in Sheets can stop it. The
    // rows move down by one, so the row above the target moves into its place and is deleted.
    hook(
      (url, body) => url.endsWith(':batchUpdate') && body.includes('deleteDimension'),
      1,
      () => sim.insertRows(ss, 'Leads', 1, [['Typed above']]),
    );
    const [d] = await connector.write('0', [{ kind: 'delete', remoteId: target.id, idempotencyKey: 'd' }]);
    // The target's tag survived: its row was not deleted, so the delete is reported and retried.
    expect(d?.ok === false && d.error.code).toBe('transient');
    // The row deleted in its place is back, with its cells, formats and id, right above the target.
    expect(rowsById()).toEqual(before);
    expect(rowOf(sim, above.id)).toBe(rowOf(sim, target.id) - 1);
    expect(formatsOf(rowOf(sim, above.id))).toEqual(formatsAbove);
    expect(writeTags()).toEqual([]);
    // Id column, tag, check with the snapshot, delete, id column again, restore, untag.
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(4);
    // The retry deletes the target.
    const [again] = await connector.write('0', [
      { kind: 'delete', remoteId: target.id, idempotencyKey: 'd' },
    ]);
    expect(again?.ok).toBe(true);
    const after = rowsById();
    expect(after.has(target.id)).toBe(false);
    expect(after).toEqual(new Map([...before].filter(([id]) => id !== target.id)));
    // The next read sees the intended delete and the row the person typed, nothing else.
    const next = await readAll(connector, '0', first.cursor, 100);
    expect(next.deletedIds).toEqual([target.id]);
    expect(next.records.map((r) => r.fields.Name)).toEqual(['Typed above']);
  });

  it('puts back the row below when a person deletes a row above in that request, and keeps their delete', async () => {
    const first = await readAll(connector, '0', null, 100);
    const target = first.records[20] as { id: string };
    const below = first.records[21] as { id: string };
    // Two rows above the target: inside the rows read around it, and not the one deleted instead.
    const removed = first.records[18] as { id: string };
    const before = rowsById();
    // Right before the deleteDimension a person deletes that row: the rows below it move up by
    // one, so the row below the target moves into its place and is deleted.
    const removedAt = rowOf(sim, removed.id);
    hook(
      (url, body) => url.endsWith(':batchUpdate') && body.includes('deleteDimension'),
      1,
      () => sim.deleteRows(ss, 'Leads', removedAt, 1),
    );
    const [d] = await connector.write('0', [{ kind: 'delete', remoteId: target.id, idempotencyKey: 'd' }]);
    expect(d?.ok === false && d.error.code).toBe('transient');
    expect(d?.ok === false && d.error.userFacingMessage).not.toContain('version history');
    // The row below is back right below the target; the person's delete stays.
    expect(rowsById()).toEqual(new Map([...before].filter(([id]) => id !== removed.id)));
    expect(rowOf(sim, below.id)).toBe(rowOf(sim, target.id) + 1);
    const [again] = await connector.write('0', [
      { kind: 'delete', remoteId: target.id, idempotencyKey: 'd' },
    ]);
    expect(again?.ok).toBe(true);
    const next = await readAll(connector, '0', first.cursor, 100);
    expect(next.deletedIds.sort()).toEqual([removed.id, target.id].sort());
    expect(next.records).toEqual([]);
  });

  it('spends five requests on a delete batch: the snapshot rides on the check read', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const targets = [records[4], records[30]] as { id: string }[];
    const before = rowsById();
    const bodies: string[] = [];
    hook(
      (url, body) => {
        if (url.includes(':getByDataFilter')) bodies.push(body);
        return false;
      },
      1,
      () => {},
    );
    sim.requestLog.reset();
    const results = await connector.write(
      '0',
      targets.map((t, k) => ({ kind: 'delete' as const, remoteId: t.id, idempotencyKey: `d${k}` })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(rowsById()).toEqual(new Map([...before].filter(([id]) => !targets.some((t) => t.id === id))));
    // The id-column read, the tags, the check (with the snapshot), the delete, the id column again.
    expect(sim.requestLog.count({})).toBe(5);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:getByDataFilter` })).toBe(3);
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss}:batchUpdate` })).toBe(2);
    // Only the check asks for rows: the ranges around both targets.
    expect(bodies.map((b) => (JSON.parse(b).dataFilters as unknown[]).length)).toEqual([1, 3, 1]);
    expect(writeTags()).toEqual([]);
  });

  it('names the row a delete hit instead of its target when the shift is past the snapshot, and leaves the rest alone', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const target = records[20] as { id: string };
    // The rows move down by more than the margin read around the target.
    const shift = 8;
    const hit = records[20 - shift] as { id: string };
    const before = rowsById();
    hook(
      (url, body) => url.endsWith(':batchUpdate') && body.includes('deleteDimension'),
      1,
      () =>
        sim.insertRows(
          ss,
          'Leads',
          1,
          Array.from({ length: shift }, (_, k) => [`Typed ${k}`]),
        ),
    );
    const [d] = await connector.write('0', [{ kind: 'delete', remoteId: target.id, idempotencyKey: 'd' }]);
    expect(d?.ok).toBe(false);
    if (d?.ok !== false) return;
    expect(d.error.code).toBe('transient');
    expect(d.error.userFacingMessage).toContain(hit.id);
    expect(d.error.userFacingMessage).toContain('version history');
    const after = rowsById();
    expect(after.has(hit.id)).toBe(false);
    expect(after).toEqual(new Map([...before].filter(([id]) => id !== hit.id)));
    expect(writeTags()).toEqual([]);
  });

  it('removes a write tag a crash left on the next read, and never writes through it', async () => {
    const { records } = await readAll(connector, '0', null, 100);
    const target = records[20] as { id: string };
    const other = records[5] as { id: string };
    // A crash between tagging and untagging left a tag carrying the target's id, on a row that has
    // since become another record's (rows moved).
    const res = await fetch(`${sim.url}/v4/spreadsheets/${ss}:batchUpdate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: WRITE_TAG_KEY,
                metadataValue: target.id,
                visibility: 'DOCUMENT',
                location: {
                  dimensionRange: {
                    sheetId: 0,
                    dimension: 'ROWS',
                    startIndex: rowOf(sim, other.id),
                    endIndex: rowOf(sim, other.id) + 1,
                  },
                },
              },
            },
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const before = rowsById();
    // A later write (a new connector, nothing read yet) goes through its own tag only.
    const [u] = await connectorFor(sim).write('0', [
      { kind: 'update', remoteId: target.id, fields: { Stage: 'Won' }, idempotencyKey: 'u' },
    ]);
    expect(u?.ok).toBe(true);
    const after = rowsById();
    expect(after.get(other.id)).toEqual(before.get(other.id));
    expect(after.get(target.id)?.[3]).toBe('Won');
    expect(writeTags()).toEqual([{ index: rowOf(sim, other.id), sheetId: 0, value: target.id }]);
    // The next read removes it, and reads nothing new.
    const next = await readAll(connector, '0', null, 100);
    expect(next.records).toHaveLength(40);
    expect(writeTags()).toEqual([]);
  });

  it('moves ids of a sheet tagged the old way (row metadata) into the column and deletes the metadata', async () => {
    // The design before: each row carries developer metadata lockstep.rowId.
    const legacy = Array.from({ length: 40 }, (_, k) => `rOld${String(k).padStart(8, '0')}`);
    const res = await fetch(`${sim.url}/v4/spreadsheets/${ss}:batchUpdate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: legacy.map((id, k) => ({
          createDeveloperMetadata: {
            developerMetadata: {
              metadataKey: ROW_ID_KEY,
              metadataValue: id,
              visibility: 'DOCUMENT',
              location: {
                dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: k + 1, endIndex: k + 2 },
              },
            },
          },
        })),
      }),
    });
    expect(res.status).toBe(200);
    const names = (sim.values(ss, 'Leads') as unknown[][]).slice(1, 41).map((r) => r[0]);
    const first = await readAll(connector, '0', null, 15);
    expect(first.records.map((r) => r.id)).toEqual(legacy);
    expect(first.records.map((r) => r.fields.Name)).toEqual(names);
    expect(sim.state.rowsWithMetadata(ss, ROW_ID_KEY)).toEqual([]);
    expect(idRows(sim).map((r) => r.value)).toEqual(legacy);
    // The next passes read the same ids from the column: nothing new, nothing deleted.
    const quiet = await readAll(connector, '0', first.cursor, 15);
    expect(quiet.records).toEqual([]);
    expect(quiet.deletedIds).toEqual([]);
    const fresh = await readAll(connectorFor(sim), '0', null, 100);
    expect(fresh.records.map((r) => r.id)).toEqual(legacy);
  });
});
