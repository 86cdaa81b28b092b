import {
  type AirtableSimulator,
  type NotionSimulator,
  startAirtableSimulator,
  startNotionSimulator,
} from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { airtableRuntimeFactory } from './runtime-connectors';

// Notion (left) <-> Airtable (right), both simulators started here, set up over REST as a user would
// and run by the real job queue. Neither side pushes here: changes are picked up by sync-now.
let t: TestApp;
let user: Awaited<ReturnType<typeof signUp>>;
let notion: NotionSimulator;
let airtable: AirtableSimulator;
let baseId = '';
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
  // The real runtime factory, with a short wait after a 429 (Airtable's is 30 s) to keep the test fast.
  t.ctx.runtimeConnectors.register(
    'airtable',
    airtableRuntimeFactory({ allowCustomBaseUrl: true, pool: t.ctx.pool, client: { rateLimitWaitMs: 250 } }),
  );
  user = await signUp(t.app, 'notion-airtable@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
/**
 * Both apps fresh for each attempt of the test (vitest retries it once): a retry must not meet the
 * records, and the still running sync, of the attempt before it.
 */
async function freshApps() {
  await notion?.close();
  await airtable?.close();
  notion = await startNotionSimulator({ seed: { people: 8 } });
  airtable = await startAirtableSimulator({ seed: false });
  baseId = airtable.seed({ contacts: 6 }).baseId;
}
afterAll(async () => {
  await t.close();
  await notion?.close();
  await airtable?.close();
});

type Person = { id: string; Name?: string; Email?: string; Phone?: string };

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
      Phone: (props.Phone?.phone_number as string | null) ?? undefined,
    };
  });
}

function contacts(): Person[] {
  const table = airtable.state.table(baseId, 'Contacts');
  const nameOf = new Map(table.fields.map((f) => [f.id, f.name]));
  return [...table.records.values()].map((r) => {
    const out: Record<string, unknown> = { id: r.id };
    for (const [fieldId, value] of r.cells) out[nameOf.get(fieldId) ?? fieldId] = value;
    return out as Person;
  });
}

const settle = (coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) =>
  settleSync(t.ctx.db, coreBaseId, check, timeoutMs);

async function syncNow(coreBaseId: string, check: () => Promise<boolean> | boolean, timeoutMs?: number) {
  await api('POST', `/rest/core-bases/${coreBaseId}/sync-now`, {});
  return settle(coreBaseId, check, timeoutMs);
}

const emails = (list: Person[]) => list.map((p) => p.Email).filter(Boolean) as string[];

describe('Notion <-> Airtable through the runtime', () => {
  it('first sync matched on email, edits both ways, a conflict, deletes, and a 429 storm without loss or duplicates', async () => {
    await freshApps();
    const seededPeople = people();
    expect(seededPeople).toHaveLength(8);
    // Airtable already knows two of the Notion people (other names, with a phone).
    const [c0, c1] = contacts() as [Person, Person];
    const [p0, p1, p2] = seededPeople as [Person, Person, Person];
    airtable.mutateRecord(baseId, 'Contacts', c0.id, {
      Email: p0.Email,
      Name: 'Other name 0',
      Phone: '+1 555 0100',
    });
    airtable.mutateRecord(baseId, 'Contacts', c1.id, {
      Email: p1.Email,
      Name: 'Other name 1',
      Phone: '+1 555 0101',
    });
    const union = new Set([...emails(people()), ...emails(contacts())]);

    const nConn = await api('POST', '/rest/external-connections', {
      type: 'notion',
      connectionItems: { internalToken: notion.token, baseUrl: notion.url },
    });
    const aConn = await api('POST', '/rest/external-connections', {
      type: 'airtable',
      connectionItems: { apiKey: airtable.token, baseUrl: airtable.url },
    });
    const bases = (await api('PATCH', `/rest/external-connections/${nConn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    const peopleBase = bases.find((b) => b.name === 'People') as { remoteId: string };
    const core = await api('POST', '/rest/core-bases', { name: 'Notion People <-> Airtable CRM' });
    await api('POST', '/rest/external-bases', {
      type: 'notion',
      name: 'People',
      remoteId: peopleBase.remoteId,
      coreBaseId: core.id,
      externalConnectionId: nConn.id,
      side: 'left',
    });
    const full = await api('POST', '/rest/external-bases', {
      type: 'airtable',
      name: 'CRM',
      remoteId: baseId,
      coreBaseId: core.id,
      externalConnectionId: aConn.id,
      side: 'right',
    });
    type Table = { id: string; name: string; externalColumns: { id: string; name: string }[] };
    const lt = (full.leftExternalBase.externalTables as Table[]).find((x) => x.name === 'People') as Table;
    const rt = (full.rightExternalBase.externalTables as Table[]).find((x) => x.name === 'Contacts') as Table;
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
            columnMappings: ['Name', 'Email', 'Phone'].map((n) => ({
              leftColumnId: col(lt, n),
              rightColumnId: col(rt, n),
            })),
          },
        ],
      },
    });

    // First sync: matched on email (Notion, the left side, wins the matched pairs), the rest created.
    await api('PATCH', `/rest/core-bases/${core.id}`, { syncState: 'on' });
    await settle(core.id, () => people().length === union.size && contacts().length === union.size);
    expect(new Set(emails(people()))).toEqual(union);
    expect(new Set(emails(contacts()))).toEqual(union);
    const matched = contacts().find((c) => c.id === c0.id);
    expect(matched).toMatchObject({ Email: p0.Email, Name: p0.Name });
    // The Notion person had no phone: the left side's empty value won the matched pair.
    expect(people().find((p) => p.id === p0.id)?.Name).toBe(p0.Name);

    // An edit in Notion reaches Airtable.
    notion.editPage(p2.id, { Name: 'Edited in Notion' });
    await syncNow(core.id, () => contacts().find((c) => c.Email === p2.Email)?.Name === 'Edited in Notion');

    // An edit in Airtable reaches Notion.
    airtable.mutateRecord(baseId, 'Contacts', c1.id, { Phone: '+1 555 0199' });
    await syncNow(core.id, () => people().find((p) => p.id === p1.id)?.Phone === '+1 555 0199');

    // A conflict (both sides changed the same field) follows the winner side, Notion.
    notion.editPage(p0.id, { Name: 'Notion wins' });
    airtable.mutateRecord(baseId, 'Contacts', c0.id, { Name: 'Airtable loses' });
    await syncNow(core.id, () => contacts().find((c) => c.id === c0.id)?.Name === 'Notion wins');
    expect(people().find((p) => p.id === p0.id)?.Name).toBe('Notion wins');

    // Deletes: trashed in Notion (found by the pass's trash query), deleted in Airtable.
    const trashed = seededPeople[3] as Person;
    const removed = contacts().find((c) => c.Email === seededPeople[4]?.Email) as Person;
    notion.trashPage(trashed.id);
    airtable.deleteRecord(baseId, 'Contacts', removed.id);
    await syncNow(
      core.id,
      () =>
        !contacts().some((c) => c.Email === trashed.Email) &&
        !people().some((p) => p.Email === removed.Email),
    );
    expect(people()).toHaveLength(union.size - 2);
    expect(contacts()).toHaveLength(union.size - 2);

    // A 429 storm in the middle: Notion answers its POSTs (queries and creates) with 429 more often
    // than the client retries; the run fails over to the queue's retry, nothing lost or doubled.
    const before = notion.requestLog.count({ status: 429 });
    for (let i = 1; i <= 5; i++)
      airtable.createRecord(baseId, 'Contacts', { Name: `Storm ${i}`, Email: `storm${i}@example.com` });
    airtable.mutateRecord(baseId, 'Contacts', c1.id, { Name: 'During the storm' });
    notion.faults.next({ kind: 'rate_limit', count: 6, method: 'POST' });
    const stormDone = () =>
      people().filter((p) => p.Email?.startsWith('storm')).length >= 5 &&
      people().find((p) => p.id === p1.id)?.Name === 'During the storm';
    await syncNow(core.id, stormDone, 45_000);
    expect(notion.requestLog.count({ status: 429 }) - before).toBe(6);
    const storm = people().filter((p) => p.Email?.startsWith('storm'));
    expect(storm).toHaveLength(5);
    expect(new Set(emails(people())).size).toBe(people().length);
    expect(people()).toHaveLength(union.size + 3);
    expect(contacts()).toHaveLength(union.size + 3);
    // A quiet run afterwards changes nothing: no echo, no duplicate.
    await syncNow(core.id, () => true);
    expect(people()).toHaveLength(union.size + 3);
    expect(contacts()).toHaveLength(union.size + 3);
    const issues = await api(
      'GET',
      `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id }))}`,
    );
    expect(issues.items).toEqual([]);
  }, 120_000);
});
