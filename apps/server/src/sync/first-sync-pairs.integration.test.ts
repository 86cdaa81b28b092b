import { randomBytes } from 'node:crypto';
import { matchKeyOf, type RecordData, reconcile, type Shadow } from '@lockstep/engine';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs } from '../../test/pg-pair';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { ensureDemoDatabases } from '../demo/demo-databases';
import { loadSyncPlan } from './load-sync-plan';
import { relationTargets } from './relations';
import { sideConnector } from './side-connector';

// Issue 17's promise, over REST as a new user goes: for each pair the embedded default offers,
// automap, preview, apply; then no open issue, no duplicate, and every record in step, checked by
// reading both apps whole (not Lockstep's tables) and reconciling them: nothing left to do.
let t: TestApp;
let api: Api;
/** The current pair's private copies of the demo databases (each pair starts from fresh ones). */
let suffix = randomBytes(4).toString('hex');
let adminUrl: (database?: string) => string;

/** The syncs made so far: each is switched off before the next pair starts. */
const syncs: string[] = [];

/**
 * Fresh private copies of the demo databases, as a new user's are: the earlier pairs wrote to the
 * last ones. The earlier pairs' syncs are switched off and settled first: a demo connection finds
 * its database by name each time it opens, so a sync left on would reach the new copies.
 */
async function freshDemoDatabases() {
  for (const id of syncs.splice(0)) {
    await api('PATCH', `/rest/core-bases/${id}`, { syncState: 'off' });
    await settleSync(t.ctx.db, id, () => true, 60_000);
  }
  suffix = randomBytes(4).toString('hex');
  for (const name of ['demo_crm', 'demo_newsletter'])
    await ensureDatabase(inject('adminDatabaseUrl'), `${name}_${suffix}`);
  await ensureDemoDatabases(adminUrl);
}

type App =
  | 'demo_crm'
  | 'demo_newsletter'
  | 'airtable'
  | 'notion'
  | 'google_sheets'
  | 'hubspot'
  | 'pipedrive'
  | 'attio'
  | 'salesforce'
  | 'affinity'
  | 'webflow'
  | 'stripe'
  | 'memberstack';

beforeAll(async () => {
  // Private copies of the demo databases: the pairs write to them.
  adminUrl = (database = 'postgres') => {
    const u = new URL(inject('adminDatabaseUrl'));
    u.pathname = `/${database.startsWith('demo_') ? `${database}_${suffix}` : database}`;
    return u.toString();
  };
  t = await createTestApp({ LOCKSTEP_SANDBOX: '1' });
  t.ctx.embeddedDatabaseUrl = adminUrl;
  api = apiAs(t.app, (await signUp(t.app, 'first-sync-pairs@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => t?.close());

async function connect(coreBaseId: string, side: 'left' | 'right', app: App) {
  const demo = app.startsWith('demo_');
  const conn = demo
    ? await api('POST', `/rest/demo-databases/${app}/connect`)
    : await api('POST', `/rest/sandbox-apps/${app}/connect`);
  const remoteId = demo
    ? 'public'
    : (await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`)).basePreviews[0]
        .remoteId;
  await api('POST', '/rest/external-bases', {
    type: demo ? 'postgresql' : app,
    name: app,
    remoteId,
    coreBaseId,
    externalConnectionId: conn.id,
    side,
  });
}

/** What the web app's "Automap tables and fields" does: every proposed pair, with its fields. */
async function automap(coreBaseId: string) {
  const { proposals } = await api('POST', `/rest/ai-table-mapper/${coreBaseId}/automap`, {});
  const planned = proposals.map((p: { leftTableId: string; rightTableId: string }) => ({
    leftTableId: p.leftTableId,
    rightTableId: p.rightTableId,
  }));
  const tableMappings = [];
  for (const p of planned) {
    const fields = await api('POST', `/rest/ai-field-mapper/${coreBaseId}/automap`, {
      ...p,
      plannedTablePairs: planned,
    });
    tableMappings.push({
      ...p,
      syncDirection: 'both',
      filter: null,
      matchOnFieldId: fields.matchOnFieldId,
      matchOnSecondaryFieldId: fields.matchOnFieldId ? (fields.matchOnSecondaryFieldId ?? null) : null,
      conflictWinnerSide: 'left',
      conflictReview: false,
      deleteProtection: false,
      columnMappings: fields.proposals.map(
        (f: {
          leftColumnId: string;
          rightColumnId: string;
          syncDirection: string;
          optionPairs?: { left: string; right: string }[] | null;
        }) => ({
          leftColumnId: f.leftColumnId,
          rightColumnId: f.rightColumnId,
          syncDirection: f.syncDirection,
          ownerSide: null,
          optionPairs: f.optionPairs ?? null,
        }),
      ),
    });
  }
  return api('PATCH', `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`, {
    mappings: { tableMappings },
  });
}

type Column = { id: string; fieldType: string; options?: { choices?: string[] } | null };
type SavedMapping = {
  id: string;
  leftTableId: string;
  rightTableId: string;
  syncDirection: string;
  filter: unknown;
  matchOnFieldId: string | null;
  matchOnSecondaryFieldId: string | null;
  conflictWinnerSide: string;
  conflictReview: boolean;
  deleteProtection: boolean;
  columnMappings: {
    id?: string;
    leftColumnId: string;
    rightColumnId: string;
    syncDirection: string;
    ownerSide: string | null;
    optionPairs: { left: string; right: string }[] | null;
  }[];
};

/**
 * What a user does with the preview's value problems: in the field mapping, pairs each option the
 * other app lacks with one it has (the first offered), saves, and previews again.
 */
async function pairRemainingOptions(
  coreBaseId: string,
  problems: { kind: string; details: { side: string; fieldId: string } }[],
) {
  const base = await api('GET', `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`);
  const columns = new Map<string, Column & { remoteId: string }>();
  for (const eb of [base.leftExternalBase, base.rightExternalBase])
    for (const table of eb.externalTables) for (const c of table.externalColumns) columns.set(c.id, c);
  const choices = (id: string) => columns.get(id)?.options?.choices ?? [];
  // The body the web app's field mapping page saves (toMappingInput), with the new pairs.
  const tableMappings = (base.mappings.tableMappings as SavedMapping[]).map((m) => ({
    id: m.id,
    leftTableId: m.leftTableId,
    rightTableId: m.rightTableId,
    syncDirection: m.syncDirection,
    filter: m.filter ?? null,
    matchOnFieldId: m.matchOnFieldId,
    matchOnSecondaryFieldId: m.matchOnSecondaryFieldId,
    conflictWinnerSide: m.conflictWinnerSide,
    conflictReview: m.conflictReview,
    deleteProtection: m.deleteProtection,
    columnMappings: m.columnMappings.map(({ id: _id, ...c }) => {
      const wanted = problems.filter(
        (p) =>
          p.kind === 'value' &&
          p.details.fieldId ===
            columns.get(p.details.side === 'left' ? c.leftColumnId : c.rightColumnId)?.remoteId,
      );
      if (wanted.length === 0) return c;
      const pairs = [...(c.optionPairs ?? [])];
      for (const side of ['left', 'right'] as const) {
        if (!wanted.some((p) => p.details.side === side)) continue;
        const [mine, theirs] =
          side === 'left' ? [c.leftColumnId, c.rightColumnId] : [c.rightColumnId, c.leftColumnId];
        const target = choices(theirs)[0];
        if (!target) continue;
        for (const option of choices(mine)) {
          if (pairs.some((p) => p[side] === option)) continue;
          pairs.push(side === 'left' ? { left: option, right: target } : { left: target, right: option });
        }
      }
      return { ...c, optionPairs: pairs };
    }),
  }));
  await api('PATCH', `/rest/core-bases/${coreBaseId}?detailLevel=fullBaseSchema`, {
    mappings: { tableMappings },
  });
}

async function previewStatus(id: string, statuses: string[]) {
  for (let i = 0; i < 1200; i++) {
    const p = await api('GET', `/rest/sync-preview/${id}`);
    if (statuses.includes(p.status)) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`preview ${id} never reached ${statuses.join(' or ')}`);
}

/**
 * Both apps read whole through their connectors and reconciled with every link, as a full rescan
 * would: per table pair, the records on each side, the links, what a run would still write, the
 * linked records a relation waits for, and the match keys held by more than one record of a side
 * (duplicates). Linked-record ids cross through the links of the tables they link to, as in a run.
 * Reconciling compares each side with what was synced (the shadow), so a link an app dropped on
 * write would look settled: each linked pair's relations are also compared across directly
 * (`linksApart`: the pairs whose linked records are not each other's partners).
 */
async function inStep(coreBaseId: string) {
  const plan = await loadSyncPlan(t.ctx.db, coreBaseId);
  if (!plan) throw new Error('no plan');
  const deps = { db: t.ctx.db, secretBox: t.ctx.secretBox, connectors: t.ctx.runtimeConnectors };
  const targets = relationTargets(plan.mappings);
  const partners = new Map<string, { left: Map<string, string>; right: Map<string, string> }>();
  for (const m of plan.mappings) {
    const rows = await t.ctx.db
      .selectFrom('core_meta_record')
      .select(['left_remote_id', 'right_remote_id'])
      .where('table_mapping_id', '=', m.tableMappingId)
      .execute();
    const pairs = { left: new Map<string, string>(), right: new Map<string, string>() };
    for (const r of rows)
      if (r.left_remote_id && r.right_remote_id) {
        pairs.left.set(r.left_remote_id, r.right_remote_id);
        pairs.right.set(r.right_remote_id, r.left_remote_id);
      }
    partners.set(m.tableMappingId, pairs);
  }
  const resolveRelation = (fieldMappingId: string, from: 'left' | 'right', id: string) =>
    partners.get(targets.get(fieldMappingId) ?? '')?.[from].get(id) ?? null;
  const out = [];
  for (const m of plan.mappings) {
    const read = async (side: 'left' | 'right') => {
      const connector = await sideConnector(deps, m[side], side);
      const records: RecordData[] = [];
      let cursor: string | null = null;
      for (;;) {
        const page = await connector.read(m[side].tableRemoteId, cursor, { pageSize: 500 });
        records.push(...page.records);
        if (page.scanComplete || !page.hasMore) break;
        cursor = page.nextCursor;
      }
      return records;
    };
    const [left, right] = [await read('left'), await read('right')];
    const links = await t.ctx.db
      .selectFrom('core_meta_record')
      .select(['id', 'left_remote_id', 'right_remote_id', 'shadow', 'shadow_version'])
      .where('table_mapping_id', '=', m.tableMappingId)
      .execute();
    const result = reconcile({
      mapping: m.spec,
      links: links.map((l) => ({
        id: l.id,
        leftId: l.left_remote_id,
        rightId: l.right_remote_id,
        shadow: l.shadow as Shadow,
        version: l.shadow_version,
      })),
      left: { records: left, deletedIds: [], scanComplete: true },
      right: { records: right, deletedIds: [], scanComplete: true },
      totalLinks: links.length,
      resolveRelation,
    });
    const linksApart: string[] = [];
    const byId = (records: RecordData[]) => new Map(records.map((r) => [r.id, r]));
    const [leftById, rightById] = [byId(left), byId(right)];
    for (const fm of m.spec.fields) {
      if (fm.left.type !== 'relations' || fm.right.type !== 'relations' || fm.direction !== 'both') continue;
      for (const l of links) {
        const [L, R] = [leftById.get(l.left_remote_id ?? ''), rightById.get(l.right_remote_id ?? '')];
        if (!L || !R) continue;
        const ids = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
        const across = ids(L.fields[fm.left.id]).map((id) => resolveRelation(fm.id, 'left', id) ?? `?${id}`);
        if (across.sort().join() !== ids(R.fields[fm.right.id]).sort().join())
          linksApart.push(`${fm.left.id} ${L.id} <-> ${fm.right.id} ${R.id}`);
      }
    }
    const match = m.spec.fields.find((f) => f.id === m.matchOn.primary);
    const duplicates = (side: 'left' | 'right', records: RecordData[]) => {
      if (!match) return [];
      const seen = new Map<string, number>();
      for (const r of records) {
        const key = matchKeyOf(r.fields[match[side].id] ?? null);
        if (key !== null) seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
    };
    out.push({
      pair: `${m.left.tableName} <-> ${m.right.tableName}`,
      left: left.length,
      right: right.length,
      links: links.length,
      toWrite: result.operations.map((o) => `${o.kind} ${o.side}`),
      waiting: result.pendingRelations.map((p) => `${p.from} ${p.sourceId}: ${p.missing.join(', ')}`),
      linksApart,
      duplicates: [...duplicates('left', left), ...duplicates('right', right)],
    });
  }
  return out;
}

/**
 * What the apply wrote that the preview did not show: per side, the created count when it differs
 * from the planned creates, and every updated field of a record the preview did not list among that
 * record's changes. Records created by the apply itself are left out of the updates: their
 * relations are written right after both ends exist, which the preview shows as the create.
 */
async function appliedBeyondPreview(previewId: string, coreBaseId: string) {
  const staged = await t.ctx.db
    .selectFrom('sync_preview_record')
    .select(['side', 'remote_id', 'plan', 'changes'])
    .where('sync_preview_id', '=', previewId)
    .execute();
  const entries = await t.ctx.db
    .selectFrom('sync_log_entry')
    .select(['side', 'operation', 'remote_id', 'before', 'after', 'record_count', 'records'])
    .where('core_base_id', '=', coreBaseId)
    .execute();
  const creates: string[] = [];
  const created = new Set<string>();
  for (const side of ['left', 'right'] as const) {
    const planned = staged.filter((r) => r.plan === `create_${side}`).length;
    const mine = entries.filter((e) => e.side === side && e.operation === 'create');
    for (const e of mine) {
      if (e.remote_id) created.add(`${side}:${e.remote_id}`);
      for (const id of e.records?.remote ?? []) created.add(`${side}:${id}`);
    }
    const done = mine.reduce((n, e) => n + e.record_count, 0);
    if (done !== planned) creates.push(`${side}: planned ${planned}, created ${done}`);
  }
  const shown = new Map<string, Set<string>>();
  for (const r of staged)
    if (r.plan === `update_${r.side}`)
      shown.set(`${r.side}:${r.remote_id}`, new Set(Object.keys((r.changes ?? {}) as object)));
  const updates: string[] = [];
  for (const e of entries) {
    if (e.operation !== 'update' || created.has(`${e.side}:${e.remote_id}`)) continue;
    const fields = shown.get(`${e.side}:${e.remote_id}`) ?? new Set();
    for (const field of Object.keys((e.after ?? {}) as object))
      if (!fields.has(field)) updates.push(`${e.side} ${e.remote_id} ${field}`);
  }
  return { creates, updates };
}

const PAIRS: [App, App][] = [
  ['demo_crm', 'demo_newsletter'],
  ['airtable', 'demo_crm'],
  ['google_sheets', 'notion'],
  ['notion', 'airtable'],
  ['hubspot', 'demo_crm'],
  ['pipedrive', 'demo_crm'],
  ['attio', 'demo_crm'],
  ['salesforce', 'demo_crm'],
  ['affinity', 'demo_crm'],
  ['stripe', 'demo_crm'],
  ['memberstack', 'demo_newsletter'],
  ['webflow', 'demo_crm'],
];

describe('the first sync of every pair the embedded default offers', () => {
  for (const [leftApp, rightApp] of PAIRS) {
    it(`${leftApp} <-> ${rightApp}: automap, preview, apply; no issue, no duplicate, in step`, async () => {
      if (leftApp.startsWith('demo_') || rightApp.startsWith('demo_')) await freshDemoDatabases();
      const core = await api('POST', '/rest/core-bases', { name: `${leftApp} <-> ${rightApp}` });
      syncs.push(core.id);
      await connect(core.id, 'left', leftApp);
      await connect(core.id, 'right', rightApp);
      await automap(core.id);
      let created = await api('POST', '/rest/sync-preview/create', { coreBaseId: core.id });
      let planned = await previewStatus(created.id, ['in_review', 'planning_problem']);
      let problems = await api('GET', `/rest/sync-preview/${created.id}/problems?take=100`);
      // Values the other app cannot hold are told before apply; the user pairs them and looks again.
      if (problems.items.some((p: { kind: string }) => p.kind === 'value')) {
        await pairRemainingOptions(core.id, problems.items);
        created = await api('POST', '/rest/sync-preview/create', { coreBaseId: core.id });
        planned = await previewStatus(created.id, ['in_review', 'planning_problem']);
        problems = await api('GET', `/rest/sync-preview/${created.id}/problems?take=100`);
      }
      expect(problems.items.map((p: { message: string }) => p.message)).toEqual([]);
      expect(planned.status).toBe('in_review');
      // A matched pair is updated or already in step, never counted as both.
      const { pairs, unchanged, updateLeft, updateRight, byTable } = planned.summary;
      expect(unchanged + 2 * Math.max(updateLeft, updateRight)).toBeLessThanOrEqual(2 * pairs);
      // The tabs count one table pair at a time, and the pairs add up to the totals.
      const perPair = Object.values(byTable) as Record<string, number>[];
      expect(perPair.length).toBeGreaterThan(0);
      for (const k of ['createLeft', 'createRight', 'updateLeft', 'updateRight', 'unchanged'])
        expect(
          perPair.reduce((n, one) => n + (one[k] ?? 0), 0),
          k,
        ).toBe(planned.summary[k]);

      await api('PATCH', `/rest/sync-preview/${created.id}`, { status: 'applying' });
      expect((await previewStatus(created.id, ['done', 'applying_failed'])).status).toBe('done');
      // The progress the page shows while applying ends full: every planned record in step.
      const progress = await api('GET', `/rest/sync-preview/${created.id}/apply-progress`);
      expect(progress.total).toBeGreaterThan(0);
      expect(progress.tables.map((x: { done: number; total: number }) => x.done - x.total)).toEqual(
        progress.tables.map(() => 0),
      );
      await settleSync(t.ctx.db, core.id, () => true, 60_000);
      expect(await appliedBeyondPreview(created.id, core.id)).toEqual({ creates: [], updates: [] });
      const issues = await api(
        'GET',
        `/rest/sync-errors?take=5&filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, status: 'open' }))}`,
      );
      expect(issues.items.map((i: { userFacingMessage: string }) => i.userFacingMessage)).toEqual([]);
      for (const table of await inStep(core.id)) {
        expect(table, table.pair).toMatchObject({
          toWrite: [],
          waiting: [],
          linksApart: [],
          duplicates: [],
        });
        expect([table.left, table.right], table.pair).toEqual([table.links, table.links]);
      }
    }, 180_000);
  }
});
