import { randomBytes } from 'node:crypto';
import type { RecordData } from '@lockstep/engine';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, query } from '../../../test/pg-pair';
import { settleSync } from '../../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';
import { ensureDatabase } from '../../db/database';
import { ensureDemoDatabases } from '../../demo/demo-databases';
import { loadSyncPlan } from '../../sync/load-sync-plan';
import { sideConnector } from '../../sync/side-connector';

// Schema generation into the SaaS apps, over REST as a user goes: a PostgreSQL table (the demo CRM's
// contacts) is created in each app's sandbox (the simulators this server runs) and mapped by
// POST /rest/generate-schema/setup/{tableId}; then a first sync (preview, apply) fills the new
// table with every row, with no problem, no open issue, and nothing left to write.
let t: TestApp;
let api: Api;
const suffix = randomBytes(4).toString('hex');
let crmUrl: string;

beforeAll(async () => {
  const adminUrl = (database = 'postgres') => {
    const u = new URL(inject('adminDatabaseUrl'));
    u.pathname = `/${database.startsWith('demo_') ? `${database}_${suffix}` : database}`;
    return u.toString();
  };
  for (const name of ['demo_crm', 'demo_newsletter'])
    await ensureDatabase(inject('adminDatabaseUrl'), `${name}_${suffix}`);
  await ensureDemoDatabases(adminUrl);
  crmUrl = adminUrl('demo_crm');
  t = await createTestApp({ LOCKSTEP_SANDBOX: '1' });
  t.ctx.embeddedDatabaseUrl = adminUrl;
  api = apiAs(t.app, (await signUp(t.app, 'generate-schema-saas@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
});
afterAll(async () => t?.close());

async function previewStatus(id: string, statuses: string[]) {
  for (let i = 0; i < 1200; i++) {
    const p = await api('GET', `/rest/sync-preview/${id}`);
    if (statuses.includes(p.status)) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`preview ${id} never reached ${statuses.join(' or ')}`);
}

async function readAll(coreBaseId: string, side: 'left' | 'right') {
  const plan = await loadSyncPlan(t.ctx.db, coreBaseId);
  const m = plan?.mappings[0];
  if (!m) throw new Error('no mapping');
  const deps = { db: t.ctx.db, secretBox: t.ctx.secretBox, connectors: t.ctx.runtimeConnectors };
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
}

type CreatedColumn = { name: string; fieldType: string; renamedFrom?: string };

describe('a PostgreSQL table generated into each SaaS sandbox, then a first sync', () => {
  for (const app of ['airtable', 'notion', 'google_sheets'] as const) {
    it(`contacts -> ${app}: created, mapped, filled with no issue; then create-fields`, async () => {
      const core = await api('POST', '/rest/core-bases', { name: `contacts -> ${app}` });
      const pg = await api('POST', '/rest/demo-databases/demo_crm/connect');
      await api('POST', '/rest/external-bases', {
        type: 'postgresql',
        name: 'CRM',
        remoteId: 'public',
        coreBaseId: core.id,
        externalConnectionId: pg.id,
        side: 'left',
      });
      const conn = await api('POST', `/rest/sandbox-apps/${app}/connect`);
      const previews = await api('PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`);
      await api('POST', '/rest/external-bases', {
        type: app,
        name: app,
        remoteId: previews.basePreviews[0].remoteId,
        coreBaseId: core.id,
        externalConnectionId: conn.id,
        side: 'right',
      });
      const full = await api('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
      const contacts = full.leftExternalBase.externalTables.find(
        (x: { name: string }) => x.name === 'contacts',
      );

      const setup = await api('POST', `/rest/generate-schema/setup/${contacts.id}`);
      expect(setup.skipped).toEqual([]);
      const made = setup.setUp[0];
      const columns = made.created.columns as CreatedColumn[];
      const typeOf = (name: string) => columns.find((c) => (c.renamedFrom ?? c.name) === name)?.fieldType;
      // Each field in the app's own type, read back by discovery (Sheets infers types from values:
      // an empty sheet's columns read as text until the first sync writes them).
      if (app !== 'google_sheets') {
        expect(typeOf('email')).toBe('text'); // a text column in PostgreSQL
        // Notion's title is the first text field (email here); the others are rich text.
        expect(typeOf('full_name')).toBe(app === 'notion' ? 'rich_text' : 'text');
        expect(typeOf('do_not_contact')).toBe('boolean');
        expect(typeOf('stage')).toBe('single_select');
        expect(typeOf('last_contacted')).toBe('date');
      }
      expect(columns.map((c) => c.renamedFrom ?? c.name)).toEqual(
        expect.arrayContaining(['email', 'full_name', 'phone', 'stage', 'notes']),
      );
      // The Airtable sandbox has a "Contacts" table already: Airtable compares names regardless of
      // case, so the new one is renamed and says so.
      if (app === 'airtable')
        expect(made.created).toMatchObject({ name: 'contacts 2', renamedFrom: 'contacts' });
      expect(made.tableMappingId).toMatch(/\S/);

      const preview = await api('POST', '/rest/sync-preview/create', { coreBaseId: core.id });
      const planned = await previewStatus(preview.id, ['in_review', 'planning_problem']);
      const problems = await api('GET', `/rest/sync-preview/${preview.id}/problems?take=100`);
      expect(problems.items.map((p: { message: string }) => p.message)).toEqual([]);
      expect(planned.status).toBe('in_review');
      await api('PATCH', `/rest/sync-preview/${preview.id}`, { status: 'applying' });
      expect((await previewStatus(preview.id, ['done', 'applying_failed'])).status).toBe('done');
      await settleSync(t.ctx.db, core.id, () => true, 60_000);
      const issues = await api(
        'GET',
        `/rest/sync-errors?take=5&filters=${encodeURIComponent(JSON.stringify({ coreBaseId: core.id, status: 'open' }))}`,
      );
      expect(issues.items.map((i: { userFacingMessage: string }) => i.userFacingMessage)).toEqual([]);
      const rows = await query(crmUrl, 'select count(*)::int as n from contacts');
      const [left, right] = [await readAll(core.id, 'left'), await readAll(core.id, 'right')];
      expect(left.length).toBe(rows[0].n);
      expect(right.length).toBe(left.length);

      // create-fields: fields of another PostgreSQL table added to the new one; "created_at" is
      // taken there, so it gets a suffix and says so.
      const companies = full.leftExternalBase.externalTables.find(
        (x: { name: string }) => x.name === 'companies',
      );
      const pick = (name: string) =>
        companies.externalColumns.find((c: { name: string }) => c.name === name).id as string;
      const appBaseId = full.rightExternalBase.id as string;
      const added = await api('POST', `/rest/generate-schema/${appBaseId}/create-fields`, {
        destTableId: made.created.externalTableId,
        sourceColumnIds: [pick('employees'), pick('created_at')],
      });
      expect(added.columns.map((c: CreatedColumn) => [c.name, c.renamedFrom ?? null])).toEqual([
        ['employees', null],
        ['created_at 2', 'created_at'],
      ]);
      expect(added.columns.every((c: { externalColumnId: string }) => c.externalColumnId !== '')).toBe(true);
      if (app !== 'google_sheets') expect(added.columns[0].fieldType).toBe('number');
    }, 180_000);
  }
});
