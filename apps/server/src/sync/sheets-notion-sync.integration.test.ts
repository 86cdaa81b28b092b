import {
  type GoogleSheetsSimulator,
  type NotionSimulator,
  startGoogleSheetsSimulator,
  startNotionSimulator,
} from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';

// Google Sheets (left) <-> Notion (right), both simulators started here, set up over REST as a user
// would and run by the real job queue. Neither side pushes here: changes are picked up by sync-now.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let sheets: GoogleSheetsSimulator;
let notion: NotionSimulator;
let spreadsheetId = '';
const json = { 'content-type': 'application/json' };

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload ? { ...user.auth, ...json } : user.auth,
    ...(payload ? { payload } : {}),
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

beforeAll(async () => {
  t = await createTestApp();
  sheets = await startGoogleSheetsSimulator({ seed: { leads: 6 } });
  spreadsheetId = sheets.sales?.spreadsheetId as string;
  notion = await startNotionSimulator({ seed: { people: 8 } });
  user = await signUp(t.app, 'sheets-notion@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => {
  await t.close();
  await sheets.close();
  await notion.close();
});

type Person = { id: string; Name?: string; Email?: string; Newsletter?: boolean };

/** The People data source's pages (not trashed) as Notion holds them. */
function people(): Person[] {
  const ds = notion.workspace?.peopleDataSourceId as string;
  return notion.state.listPages(ds).map((p) => {
    const props = notion.pageJson(p.id).properties as Record<string, Record<string, unknown>>;
    const title = (props.Name?.title as { plain_text: string }[] | undefined) ?? [];
    return {
      id: p.id,
      Name: title.map((x) => x.plain_text).join(''),
      Email: (props.Email?.email as string | null) ?? undefined,
      Newsletter: props.Newsletter?.checkbox as boolean,
    };
  });
}

/** The Leads sheet's rows (header left out), with their row index. */
function leads(): (Person & { row: number })[] {
  return sheets
    .values(spreadsheetId, 'Leads')
    .slice(1)
    .map((r, i) => ({
      id: String(i + 1),
      row: i + 1,
      Name: r[0] === '' ? undefined : String(r[0]),
      Email: r[1] === '' || r[1] === undefined ? undefined : String(r[1]),
      Newsletter: r[6] === true,
    }))
    .filter((r) => r.Name !== undefined || r.Email !== undefined);
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs?: number) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check, timeoutMs);
}

const emails = (list: Person[]) => list.map((p) => p.Email).filter(Boolean) as string[];

describe('Google Sheets <-> Notion through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    const seededPeople = people();
    expect(seededPeople).toHaveLength(8);
    expect(leads()).toHaveLength(6);
    // The sheet already knows two of the Notion people (other names).
    const [p0, p1, p2] = seededPeople as [Person, Person, Person];
    sheets.editCell(spreadsheetId, 'Leads', 'A2', 'Other name 0');
    sheets.editCell(spreadsheetId, 'Leads', 'B2', p0.Email);
    sheets.editCell(spreadsheetId, 'Leads', 'A3', 'Other name 1');
    sheets.editCell(spreadsheetId, 'Leads', 'B3', p1.Email);
    const union = new Set([...emails(people()), ...emails(leads())]);

    const sConn = await api('POST', '/rest/external-connections', {
      type: 'google_sheets',
      connectionItems: { accessToken: sheets.token, baseUrl: sheets.url },
    });
    const nConn = await api('POST', '/rest/external-connections', {
      type: 'notion',
      connectionItems: { internalToken: notion.token, baseUrl: notion.url },
    });
    const ssBases = (await api('PATCH', `/rest/external-connections/${sConn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    expect(ssBases.map((b) => b.remoteId)).toContain(spreadsheetId);
    const core = await api('POST', '/rest/core-bases', { name: 'Leads <-> Notion People' });
    await api('POST', '/rest/external-bases', {
      type: 'google_sheets',
      name: 'Sales pipeline',
      remoteId: spreadsheetId,
      coreBaseId: core.id,
      externalConnectionId: sConn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'notion',
      name: 'People',
      remoteId: notion.workspace?.peopleDatabaseId,
      coreBaseId: core.id,
      externalConnectionId: nConn.id,
      side: 'right',
    });
    type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'Leads') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'People') as Table;
    const col = (tbl: Table, name: string) => {
      const c = tbl.externalColumns.find((x) => x.name === name);
      if (!c) throw new Error(`no column ${name}`);
      return c.id;
    };
    await api('PATCH', `/rest/core-bases/${core.id}`, {
      mappings: {
        tableMappings: [
          {
            leftTableId: lt.id,
            rightTableId: rt.id,
            matchOnFieldId: col(lt, 'Email'),
            columnMappings: ['Name', 'Email', 'Newsletter'].map((n) => ({
              leftColumnId: col(lt, n),
              rightColumnId: col(rt, n),
            })),
          },
        ],
      },
    });

    // First sync: matched on email (the sheet, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, () => people().length === union.size && leads().length === union.size);
    expect(new Set(emails(people()))).toEqual(union);
    expect(new Set(emails(leads()))).toEqual(union);
    expect(people().find((p) => p.id === p0.id)?.Name).toBe('Other name 0');
    const fromNotion = leads().find((l) => l.Email === p2.Email);
    expect(fromNotion).toMatchObject({ Name: p2.Name, Newsletter: p2.Newsletter });

    // An edit in the sheet reaches Notion.
    sheets.editCell(spreadsheetId, 'Leads', 'A3', 'Edited in Sheets');
    await syncNow(core.id, () => people().find((p) => p.id === p1.id)?.Name === 'Edited in Sheets');

    // An edit in Notion reaches the sheet.
    notion.editPage(p2.id, { Name: 'Edited in Notion', Newsletter: !p2.Newsletter });
    await syncNow(core.id, () => {
      const l = leads().find((x) => x.Email === p2.Email);
      return l?.Name === 'Edited in Notion' && l.Newsletter === !p2.Newsletter;
    });

    // A conflict (both sides changed the same field) follows the winner side, the sheet.
    sheets.editCell(spreadsheetId, 'Leads', 'A2', 'Sheets wins');
    notion.editPage(p0.id, { Name: 'Notion loses' });
    await syncNow(core.id, () => people().find((p) => p.id === p0.id)?.Name === 'Sheets wins');
    expect(leads().find((l) => l.Email === p0.Email)?.Name).toBe('Sheets wins');

    // Deletes: a row deleted in the sheet (gone from the next pass), a page trashed in Notion.
    const rowGone = leads().find((l) => l.Email === p1.Email) as Person & { row: number };
    const trashed = seededPeople[3] as Person;
    sheets.deleteRows(spreadsheetId, 'Leads', rowGone.row);
    notion.trashPage(trashed.id);
    await syncNow(
      core.id,
      () => !people().some((p) => p.Email === p1.Email) && !leads().some((l) => l.Email === trashed.Email),
    );
    expect(people()).toHaveLength(union.size - 2);
    expect(leads()).toHaveLength(union.size - 2);

    // A 429 storm in the middle: Google answers the writes (appends of the new people) with
    // RESOURCE_EXHAUSTED more often than the client retries; nothing is lost or doubled.
    const before = sheets.requestLog.count({ status: 429 });
    const ds = notion.workspace?.peopleDataSourceId as string;
    for (let i = 1; i <= 5; i++)
      notion.createPage(ds, { Name: `Storm ${i}`, Email: `storm${i}@example.com` });
    sheets.editCell(spreadsheetId, 'Leads', 'A2', 'During the storm');
    sheets.faults.next({ kind: 'rate_limit', count: 6, method: 'POST' });
    const stormDone = () =>
      leads().filter((l) => l.Email?.startsWith('storm')).length >= 5 &&
      people().find((p) => p.id === p0.id)?.Name === 'During the storm';
    await syncNow(core.id, stormDone, 45_000);
    expect(sheets.requestLog.count({ status: 429 }) - before).toBe(6);
    expect(leads().filter((l) => l.Email?.startsWith('storm'))).toHaveLength(5);
    expect(new Set(emails(leads())).size).toBe(leads().length);
    expect(leads()).toHaveLength(union.size + 3);
    expect(people()).toHaveLength(union.size + 3);
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(leads()).toHaveLength(union.size + 3);
    expect(people()).toHaveLength(union.size + 3);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
  }, 120_000);
});
