import {
  AFFINITY_DEFAULT_TOKEN,
  ATTIO_DEFAULT_TOKEN,
  MEMBERSTACK_DEFAULT_TOKEN,
  PIPEDRIVE_DEFAULT_TOKEN,
  SALESFORCE_DEFAULT_TOKEN,
  STRIPE_DEFAULT_TOKEN,
  WEBFLOW_DEFAULT_TOKEN,
} from '@lockstep/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

let t: TestApp;
let ada: Awaited<ReturnType<typeof signUp>>;
let bob: Awaited<ReturnType<typeof signUp>>;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestApp({ LOCKSTEP_SANDBOX: '1' });
  ada = await signUp(t.app, 'sandbox-ada@test.test');
  bob = await signUp(t.app, 'sandbox-bob@test.test');
  for (const user of [ada, bob]) {
    await t.app.inject({
      method: 'POST',
      url: '/rest/users/current/choose-plan',
      headers: { ...user.auth, ...json },
      payload: { productType: 'pro' },
    });
  }
});
afterAll(async () => t.close());

async function api(user: typeof ada, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload ? { ...user.auth, ...json } : user.auth,
    ...(payload ? { payload } : {}),
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

describe('sandbox apps', () => {
  it('lists the Airtable sandbox and connects each user to a base of their own, discovered with types', async () => {
    const list = await api(ada, 'GET', '/rest/sandbox-apps');
    expect(list).toEqual({
      available: true,
      items: [
        expect.objectContaining({ connectorType: 'airtable', displayName: 'Airtable Sandbox' }),
        expect.objectContaining({ connectorType: 'notion', displayName: 'Notion Sandbox' }),
        expect.objectContaining({ connectorType: 'google_sheets', displayName: 'Google Sheets Sandbox' }),
        expect.objectContaining({ connectorType: 'hubspot', displayName: 'HubSpot Sandbox' }),
        expect.objectContaining({ connectorType: 'pipedrive', displayName: 'Pipedrive Sandbox' }),
        expect.objectContaining({ connectorType: 'attio', displayName: 'Attio Sandbox' }),
        expect.objectContaining({ connectorType: 'salesforce', displayName: 'Salesforce Sandbox' }),
        expect.objectContaining({ connectorType: 'affinity', displayName: 'Affinity Sandbox' }),
        expect.objectContaining({ connectorType: 'webflow', displayName: 'Webflow Sandbox' }),
        expect.objectContaining({ connectorType: 'stripe', displayName: 'Stripe Sandbox' }),
        expect.objectContaining({ connectorType: 'memberstack', displayName: 'Memberstack Sandbox' }),
      ],
    });
    const info = await api(ada, 'GET', '/rest/connector-info');
    expect(info.find((c: { connectorType: string }) => c.connectorType === 'airtable')).toMatchObject({
      available: true,
      auth: { requiredItems: [expect.objectContaining({ name: 'apiKey', secret: true })] },
    });

    const conn = await t.app.inject({
      method: 'POST',
      url: '/rest/sandbox-apps/airtable/connect',
      headers: ada.auth,
    });
    expect(conn.statusCode).toBe(201);
    expect(conn.json()).toMatchObject({ type: 'airtable', name: 'Airtable Sandbox', status: 'ok' });
    // The token is a secret: never returned.
    expect(conn.json().connectionItems.apiKey).toBeUndefined();
    expect(conn.json().connectionItems.baseUrl).toBe(t.ctx.sandbox?.urls()[0]);

    const bases = await api(
      ada,
      'PATCH',
      `/rest/external-connections/${conn.json().id}/fetch-base-previews`,
      {},
    );
    expect(bases.basePreviews).toEqual([{ remoteId: expect.stringMatching(/^app/), name: 'CRM' }]);
    const baseId = bases.basePreviews[0].remoteId as string;

    // Another user's sandbox is another base; neither token reaches the other's.
    const other = await api(bob, 'POST', '/rest/sandbox-apps/airtable/connect');
    const otherBases = await api(
      bob,
      'PATCH',
      `/rest/external-connections/${other.id}/fetch-base-previews`,
      {},
    );
    expect(otherBases.basePreviews).toHaveLength(1);
    expect(otherBases.basePreviews[0].remoteId).not.toBe(baseId);

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Sandbox CRM' });
    const full = await api(ada, 'POST', '/rest/external-bases', {
      type: 'airtable',
      name: 'CRM',
      remoteId: baseId,
      coreBaseId: core.id,
      externalConnectionId: conn.json().id,
      side: 'left',
    });
    const tables = full.leftExternalBase.externalTables;
    expect(tables.map((x: { name: string }) => x.name)).toEqual(['Companies', 'Contacts', 'Deals']);
    const contacts = tables.find((x: { name: string }) => x.name === 'Contacts');
    expect(contacts.remoteId).toMatch(new RegExp(`^${baseId}/tbl`));
    const col = (table: typeof contacts, name: string) =>
      table.externalColumns.find((c: { name: string }) => c.name === name);
    expect(col(contacts, 'Email')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(col(contacts, 'Status')).toMatchObject({
      fieldType: 'single_select',
      options: expect.objectContaining({ choices: ['Lead', 'Qualified', 'Customer', 'Churned'] }),
    });
    expect(col(contacts, 'Created')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(col(contacts, 'Company')).toMatchObject({ fieldType: 'relations' });
    const deals = tables.find((x: { name: string }) => x.name === 'Deals');
    expect(col(deals, 'Amount')).toMatchObject({
      fieldType: 'currency',
      options: expect.objectContaining({ currencyCode: 'USD', currencyDigits: 2 }),
    });
    expect(col(deals, 'Summary')).toMatchObject({ fieldType: 'json', readOnly: true });
  });

  it('connects each user to a Notion workspace of their own: databases as bases, data sources as tables', async () => {
    const info = await api(ada, 'GET', '/rest/connector-info');
    expect(info.find((c: { connectorType: string }) => c.connectorType === 'notion')).toMatchObject({
      available: true,
      auth: { requiredItems: [expect.objectContaining({ name: 'internalToken', secret: true })] },
    });
    const conn = await api(ada, 'POST', '/rest/sandbox-apps/notion/connect');
    expect(conn).toMatchObject({ type: 'notion', name: 'Notion Sandbox', status: 'ok' });
    expect(conn.connectionItems.internalToken).toBeUndefined();
    expect(conn.connectionItems.baseUrl).toBe(t.ctx.sandbox?.notion?.url);
    const bases = (await api(ada, 'PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    expect(bases.map((b) => b.name).sort()).toEqual(['Companies', 'People']);

    const other = await api(bob, 'POST', '/rest/sandbox-apps/notion/connect');
    const otherBases = (
      await api(bob, 'PATCH', `/rest/external-connections/${other.id}/fetch-base-previews`, {})
    ).basePreviews as { remoteId: string }[];
    expect(otherBases).toHaveLength(2);
    for (const b of otherBases) expect(bases.map((x) => x.remoteId)).not.toContain(b.remoteId);

    const people = bases.find((b) => b.name === 'People') as { remoteId: string };
    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Sandbox Notion' });
    const full = await api(ada, 'POST', '/rest/external-bases', {
      type: 'notion',
      name: 'People',
      remoteId: people.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const [table] = full.leftExternalBase.externalTables;
    expect(table.name).toBe('People');
    const col = (name: string) => table.externalColumns.find((c: { name: string }) => c.name === name);
    expect(col('Name')).toMatchObject({ fieldType: 'text', readOnly: false });
    expect(col('Email')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(col('Status')).toMatchObject({
      fieldType: 'single_select',
      options: expect.objectContaining({ choices: ['Lead', 'Contacted', 'Active', 'Customer', 'Churned'] }),
    });
    expect(col('Notes')).toMatchObject({ fieldType: 'rich_text' });
    expect(col('Company')).toMatchObject({ fieldType: 'relations' });
    expect(col('Created')).toMatchObject({ readOnly: true });
  });

  it('connects each user to a Google account of their own: spreadsheets as bases, header rows as fields', async () => {
    const info = await api(ada, 'GET', '/rest/connector-info');
    expect(info.find((c: { connectorType: string }) => c.connectorType === 'google_sheets')).toMatchObject({
      available: true,
      auth: { requiredItems: [expect.objectContaining({ name: 'accessToken', secret: true })] },
    });
    const conn = await api(ada, 'POST', '/rest/sandbox-apps/google_sheets/connect');
    expect(conn).toMatchObject({ type: 'google_sheets', name: 'Google Sheets Sandbox', status: 'ok' });
    expect(conn.connectionItems.accessToken).toBeUndefined();
    const bases = (await api(ada, 'PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {}))
      .basePreviews as { remoteId: string; name: string }[];
    // drive.file: only the spreadsheet shared with the app, not "Budget 2026".
    expect(bases).toEqual([{ remoteId: expect.any(String), name: 'Sales pipeline' }]);
    const other = await api(bob, 'POST', '/rest/sandbox-apps/google_sheets/connect');
    expect(other.connectionItems.baseUrl).not.toBe(conn.connectionItems.baseUrl);

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Sandbox Sheets' });
    const full = await api(ada, 'POST', '/rest/external-bases', {
      type: 'google_sheets',
      name: 'Sales pipeline',
      remoteId: bases[0]?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side: 'left',
    });
    const tables = full.leftExternalBase.externalTables;
    expect(tables.map((x: { name: string }) => x.name).sort()).toEqual(['Companies', 'Leads']);
    const leads = tables.find((x: { name: string }) => x.name === 'Leads');
    const companies = tables.find((x: { name: string }) => x.name === 'Companies');
    expect(leads.remoteId).toBe(`${bases[0]?.remoteId}/0`);
    const col = (name: string) => leads.externalColumns.find((c: { name: string }) => c.name === name);
    expect(leads.externalColumns.map((c: { name: string }) => c.name).sort()).toEqual([
      'Company',
      'Deal size',
      'Email',
      'Name',
      'Newsletter',
      'Signed up',
      'Stage',
    ]);
    expect(col('Newsletter')).toMatchObject({ fieldType: 'boolean' });
    expect(col('Signed up')).toMatchObject({ fieldType: 'date' });
    expect(col('Deal size')).toMatchObject({ fieldType: 'currency' });
    expect(
      companies.externalColumns.find((c: { name: string }) => c.name === 'Revenue per employee'),
    ).toMatchObject({ readOnly: true });

    // A production server refuses the simulator's address once the sandbox is gone.
    const { createConnectorRegistry } = await import('../../connectors/connector-registry');
    const production = createConnectorRegistry({ allowPrivateHosts: false, googleSheets: {} }).get(
      'google_sheets',
    );
    const gone = await production
      ?.check({ accessToken: 'ya29.x', baseUrl: conn.connectionItems.baseUrl, sandbox: 'true' })
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'auth_invalid' });
  });

  it('connects each user to a HubSpot portal of their own: contacts, companies and deals, a Full name for contacts', async () => {
    const mine = await api(ada, 'POST', '/rest/sandbox-apps/hubspot/connect');
    expect(mine).toMatchObject({ type: 'hubspot', name: 'HubSpot Sandbox', status: 'ok' });
    expect(mine.connectionItems.accessToken).toBeUndefined();
    const theirs = await api(bob, 'POST', '/rest/sandbox-apps/hubspot/connect');
    const portal = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews;
    const [a] = await portal(ada, mine.id);
    const [b] = await portal(bob, theirs.id);
    // A portal each: the sandboxes are separate simulators, with separate tokens.
    expect(a.remoteId).toBeDefined();
    expect(t.ctx.sandbox?.hubspot).toHaveLength(2);
    expect(t.ctx.sandbox?.hubspot[0]?.url).not.toBe(t.ctx.sandbox?.hubspot[1]?.url);
    expect(b.remoteId).toBeDefined();
    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'HubSpot sandbox' });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type: 'hubspot',
      name: 'HubSpot Sandbox',
      remoteId: a.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as {
      name: string;
      externalColumns: { name: string; remoteId: string }[];
    }[];
    expect(tables.map((x) => x.name).sort()).toEqual(['Companies', 'Contacts', 'Deals']);
    const contacts = tables.find((x) => x.name === 'Contacts');
    expect(contacts?.externalColumns.find((c) => c.name === 'Full name')?.remoteId).toBe(
      'firstname+lastname',
    );
  });

  it('connects each user to a Pipedrive company of their own: persons, organizations and deals', async () => {
    const mine = await api(ada, 'POST', '/rest/sandbox-apps/pipedrive/connect');
    expect(mine).toMatchObject({ type: 'pipedrive', name: 'Pipedrive Sandbox', status: 'ok' });
    // The API token is a secret: never returned.
    expect(mine.connectionItems.apiToken).toBeUndefined();
    expect(mine.connectionItems).toMatchObject({ sandbox: 'true' });
    const theirs = await api(bob, 'POST', '/rest/sandbox-apps/pipedrive/connect');
    expect(theirs.connectionItems.baseUrl).not.toBe(mine.connectionItems.baseUrl);
    const sims = t.ctx.sandbox?.pipedrive ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    const company = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews;
    const [a] = await company(ada, mine.id);
    const [b] = await company(bob, theirs.id);
    // A company each, with its own id.
    expect(a.remoteId).toBe(String(sims[0]?.state.companyId));
    expect(b.remoteId).toBe(String(sims[1]?.state.companyId));
    expect(a.remoteId).not.toBe(b.remoteId);

    // Only the connection's own token reaches a sandbox: not the simulator's well-known one.
    const port = t.ctx.connectors.get('pipedrive');
    for (const sim of sims) {
      const denied = await port
        ?.check({ apiToken: PIPEDRIVE_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Pipedrive sandbox' });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type: 'pipedrive',
      name: 'Pipedrive Sandbox',
      remoteId: a.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as {
      name: string;
      remoteId: string;
      externalColumns: { name: string; remoteId: string; fieldType: string; options: unknown }[];
    }[];
    expect(tables.map((x) => x.name).sort()).toEqual(['Deals', 'Organizations', 'Persons']);
    const persons = tables.find((x) => x.name === 'Persons');
    const col = (name: string) => persons?.externalColumns.find((c) => c.name === name);
    expect(col('Name')).toMatchObject({ remoteId: 'name', fieldType: 'text' });
    expect(col('Email')).toMatchObject({ remoteId: 'email', fieldType: 'email' });
    // The seeded custom fields, under their names.
    expect(col('Lead source')).toMatchObject({
      fieldType: 'single_select',
      options: expect.objectContaining({ choices: ['Website', 'Referral', 'Event', 'Cold call'] }),
    });
  });

  it('connects each user to an Attio workspace of their own: people, companies, deals and projects', async () => {
    const mine = await api(ada, 'POST', '/rest/sandbox-apps/attio/connect');
    expect(mine).toMatchObject({ type: 'attio', name: 'Attio Sandbox', status: 'ok' });
    // The API key is a secret: never returned.
    expect(mine.connectionItems.apiKey).toBeUndefined();
    expect(mine.connectionItems.accessToken).toBeUndefined();
    const theirs = await api(bob, 'POST', '/rest/sandbox-apps/attio/connect');
    const sims = t.ctx.sandbox?.attio ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    const workspace = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews;
    const [a] = await workspace(ada, mine.id);
    const [b] = await workspace(bob, theirs.id);
    expect(a.remoteId).toBe(sims[0]?.state.workspace.id);
    expect(b.remoteId).toBe(sims[1]?.state.workspace.id);
    expect(a.remoteId).not.toBe(b.remoteId);

    const port = t.ctx.connectors.get('attio');
    for (const sim of sims) {
      const denied = await port
        ?.check({ apiKey: ATTIO_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Attio sandbox' });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type: 'attio',
      name: 'Attio Sandbox',
      remoteId: a.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as {
      name: string;
      remoteId: string;
      externalColumns: { name: string; remoteId: string; fieldType: string; options: unknown }[];
    }[];
    // The objects, and the list (its entries a table named after it).
    expect(tables.map((x) => x.name).sort()).toEqual([
      'Companies',
      'Deals',
      'People',
      'Projects',
      'Sales pipeline',
    ]);
    const people = tables.find((x) => x.name === 'People');
    const col = (name: string) => people?.externalColumns.find((c) => c.name === name);
    // A person's name (personal-name) is one field, its parts two more.
    expect(col('Name')).toMatchObject({ remoteId: 'name', fieldType: 'text' });
    expect(col('Email addresses')).toMatchObject({ remoteId: 'email_addresses', fieldType: 'email' });
    // A link to Companies (its table's remote id): it pairs with another app's linked-record field.
    expect(col('Company')).toMatchObject({
      remoteId: 'company',
      fieldType: 'relations',
      options: expect.objectContaining({ references: 'companies' }),
    });
  });

  it('connects each user to a Salesforce org of their own: accounts, contacts, leads, opportunities and projects', async () => {
    const mine = await api(ada, 'POST', '/rest/sandbox-apps/salesforce/connect');
    expect(mine).toMatchObject({ type: 'salesforce', name: 'Salesforce Sandbox', status: 'ok' });
    // The session is a secret: never returned. The org's address is shown, as after signing in.
    expect(mine.connectionItems.accessToken).toBeUndefined();
    expect(mine.connectionItems).toMatchObject({ sandbox: 'true' });
    const theirs = await api(bob, 'POST', '/rest/sandbox-apps/salesforce/connect');
    const sims = t.ctx.sandbox?.salesforce ?? [];
    expect(sims.map((s) => s.url)).toEqual([
      mine.connectionItems.instanceUrl,
      theirs.connectionItems.instanceUrl,
    ]);
    const org = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews;
    const [a] = await org(ada, mine.id);
    const [b] = await org(bob, theirs.id);
    // An org each, with its own id.
    expect(a.remoteId).toBe(sims[0]?.state.orgId);
    expect(b.remoteId).toBe(sims[1]?.state.orgId);
    expect(a.remoteId).not.toBe(b.remoteId);

    // Only the connection's own session reaches a sandbox: not the simulator's well-known one.
    const port = t.ctx.connectors.get('salesforce');
    for (const sim of sims) {
      const denied = await port
        ?.check({ accessToken: SALESFORCE_DEFAULT_TOKEN, instanceUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }
    // A production server refuses the simulator's address once the sandbox is gone, and says so.
    const { createConnectorRegistry } = await import('../../connectors/connector-registry');
    const production = createConnectorRegistry({ allowPrivateHosts: false, salesforce: {} }).get(
      'salesforce',
    );
    const gone = await production
      ?.check({ accessToken: 'x', instanceUrl: mine.connectionItems.instanceUrl, sandbox: 'true' })
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({
      code: 'auth_invalid',
      message: expect.stringMatching(/Connect the Salesforce sandbox again/),
    });

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Salesforce sandbox' });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type: 'salesforce',
      name: 'Salesforce Sandbox',
      remoteId: a.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as {
      name: string;
      remoteId: string;
      externalColumns: {
        name: string;
        remoteId: string;
        fieldType: string;
        readOnly: boolean;
        options: unknown;
      }[];
    }[];
    expect(tables.map((x) => x.remoteId)).toEqual([
      'Account',
      'Contact',
      'Lead',
      'Opportunity',
      'Project__c',
    ]);
    const contacts = tables.find((x) => x.remoteId === 'Contact');
    const col = (id: string) => contacts?.externalColumns.find((c) => c.remoteId === id);
    expect(col('Email')).toMatchObject({ fieldType: 'email', readOnly: false });
    // Salesforce's compound name is read-only; the Full name made of first and last name is not.
    expect(col('Name')).toMatchObject({ readOnly: true });
    expect(col('FirstName+LastName')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
    });
    expect(col('AccountId')).toMatchObject({
      fieldType: 'relations',
      options: expect.objectContaining({ references: 'Account' }),
    });
    // The seeded org: 50 contacts.
    expect(sims[0]?.org?.contacts).toHaveLength(50);
  });

  it('connects each user to an Affinity account of their own: people, companies, opportunities and lists', async () => {
    const mine = await api(ada, 'POST', '/rest/sandbox-apps/affinity/connect');
    expect(mine).toMatchObject({ type: 'affinity', name: 'Affinity Sandbox', status: 'ok' });
    // The API key is a secret: never returned.
    expect(mine.connectionItems.apiKey).toBeUndefined();
    expect(mine.connectionItems).toMatchObject({ sandbox: 'true' });
    const theirs = await api(bob, 'POST', '/rest/sandbox-apps/affinity/connect');
    const sims = t.ctx.sandbox?.affinity ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    const account = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews;
    const [a] = await account(ada, mine.id);
    const [b] = await account(bob, theirs.id);
    // An account (tenant) each, with its own id.
    expect(a.remoteId).toBe(String(sims[0]?.state.tenant.id));
    expect(b.remoteId).toBe(String(sims[1]?.state.tenant.id));
    expect(a.remoteId).not.toBe(b.remoteId);

    const port = t.ctx.connectors.get('affinity');
    for (const sim of sims) {
      const denied = await port
        ?.check({ apiKey: AFFINITY_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }

    const core = await api(ada, 'POST', '/rest/core-bases', { name: 'Affinity sandbox' });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type: 'affinity',
      name: 'Affinity Sandbox',
      remoteId: a.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as {
      name: string;
      remoteId: string;
      externalColumns: {
        name: string;
        remoteId: string;
        fieldType: string;
        readOnly: boolean;
        options: unknown;
      }[];
    }[];
    const { pipeline, portfolio, founders } = sims[0]?.seed?.lists ?? {
      pipeline: 0,
      portfolio: 0,
      founders: 0,
    };
    expect(tables.map((x) => x.remoteId).sort()).toEqual(
      [
        'persons',
        'companies',
        'opportunities',
        `list-${pipeline}`,
        `list-${portfolio}`,
        `list-${founders}`,
      ].sort(),
    );
    expect(tables.map((x) => x.name)).toEqual(
      expect.arrayContaining(['People', 'Companies', 'Opportunities', 'List: Deal Pipeline']),
    );
    const people = tables.find((x) => x.remoteId === 'persons');
    const col = (id: string) => people?.externalColumns.find((c) => c.remoteId === id);
    expect(col('primaryEmailAddress')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(col('firstName+lastName')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
    });
  });

  type Column = { name: string; remoteId: string; fieldType: string; readOnly: boolean; options: unknown };
  type Table = { name: string; remoteId: string; externalColumns: Column[] };

  /** Both users connect; each gets a base of their own; the table list of the first is returned. */
  async function twoSandboxes(type: 'webflow' | 'stripe' | 'memberstack', name: string, secret: string) {
    const mine = await api(ada, 'POST', `/rest/sandbox-apps/${type}/connect`);
    expect(mine).toMatchObject({ type, name, status: 'ok' });
    // The key is a secret: never returned.
    expect(mine.connectionItems[secret]).toBeUndefined();
    expect(mine.connectionItems).toMatchObject({ sandbox: 'true' });
    const theirs = await api(bob, 'POST', `/rest/sandbox-apps/${type}/connect`);
    expect(theirs.connectionItems.baseUrl).not.toBe(mine.connectionItems.baseUrl);
    const bases = async (who: typeof ada, id: string) =>
      (await api(who, 'PATCH', `/rest/external-connections/${id}/fetch-base-previews`, {})).basePreviews as {
        remoteId: string;
        name: string;
      }[];
    const [a] = await bases(ada, mine.id);
    const [b] = await bases(bob, theirs.id);
    // One's key does not reach the other's sandbox.
    const items = async (id: string) => {
      const row = await t.ctx.db
        .selectFrom('external_connection')
        .select('secrets')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return t.ctx.secretBox.open<{ connectionItems: Record<string, string> }>(row.secrets).connectionItems;
    };
    const port = t.ctx.connectors.get(type);
    await expect(port?.check(await items(mine.id))).resolves.toBeDefined();
    const crossed = await port
      ?.check({ ...(await items(mine.id)), baseUrl: theirs.connectionItems.baseUrl })
      .catch((e: unknown) => e);
    expect(crossed).toMatchObject({ code: 'auth_invalid' });
    const core = await api(ada, 'POST', '/rest/core-bases', { name: `${type} sandbox` });
    const attached = await api(ada, 'POST', '/rest/external-bases', {
      type,
      name,
      remoteId: a?.remoteId,
      coreBaseId: core.id,
      externalConnectionId: mine.id,
      side: 'left',
    });
    const tables = attached.leftExternalBase.externalTables as Table[];
    const col = (table: string, column: string) =>
      tables.find((x) => x.name === table)?.externalColumns.find((c) => c.name === column);
    return { mine, theirs, a, b, tables, col };
  }

  it('connects each user to a Webflow site of their own: its CMS collections as tables', async () => {
    const { mine, theirs, a, b, tables, col } = await twoSandboxes('webflow', 'Webflow Sandbox', 'apiToken');
    const sims = t.ctx.sandbox?.webflow ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    // A site each (the token reaches its own site only).
    expect(a).toEqual({ remoteId: sims[0]?.siteId, name: 'Lockstep CRM' });
    expect(b?.remoteId).toBe(sims[1]?.siteId);
    expect(a?.remoteId).not.toBe(b?.remoteId);
    const port = t.ctx.connectors.get('webflow');
    for (const sim of sims) {
      const denied = await port
        ?.check({ apiToken: WEBFLOW_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }
    expect(tables.map((x) => x.name).sort()).toEqual(['Companies', 'Contacts', 'Deals']);
    expect(tables.find((x) => x.name === 'Contacts')?.remoteId).toBe(sims[0]?.crm?.collections.contacts);
    expect(col('Contacts', 'Name')).toMatchObject({ remoteId: 'name', fieldType: 'text', readOnly: false });
    expect(col('Contacts', 'Email')).toMatchObject({ fieldType: 'email' });
    expect(col('Contacts', 'Company')).toMatchObject({ fieldType: 'relations' });
  });

  it('connects each user to a Stripe account of their own, in test mode: customers, products, prices…', async () => {
    const { mine, theirs, a, b, tables, col } = await twoSandboxes('stripe', 'Stripe Sandbox', 'secretKey');
    const sims = t.ctx.sandbox?.stripe ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    // An account each, reached by a test mode key.
    expect(a?.remoteId).toBe(sims[0]?.state.accountId);
    expect(b?.remoteId).toBe(sims[1]?.state.accountId);
    expect(a?.remoteId).not.toBe(b?.remoteId);
    expect(a?.name).toMatch(/\(test mode\)$/);
    const port = t.ctx.connectors.get('stripe');
    for (const sim of sims) {
      const denied = await port
        ?.check({ secretKey: STRIPE_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }
    expect(tables.map((x) => x.name).sort()).toEqual([
      'Coupons',
      'Customers',
      'Invoices',
      'Prices',
      'Products',
      'Subscriptions',
    ]);
    expect(col('Customers', 'Email')).toMatchObject({ remoteId: 'email', fieldType: 'email' });
    expect(col('Customers', 'Name')).toMatchObject({ remoteId: 'name', fieldType: 'text' });
  });

  it('connects each user to a Memberstack app of their own, in test mode: members (a Full name) and plans', async () => {
    const { mine, theirs, a, b, tables, col } = await twoSandboxes(
      'memberstack',
      'Memberstack Sandbox',
      'secretKey',
    );
    const sims = t.ctx.sandbox?.memberstack ?? [];
    expect(sims.map((s) => s.url)).toEqual([mine.connectionItems.baseUrl, theirs.connectionItems.baseUrl]);
    expect(a).toEqual({ remoteId: 'test', name: 'Memberstack (test mode)' });
    expect(b).toEqual(a);
    const port = t.ctx.connectors.get('memberstack');
    for (const sim of sims) {
      const denied = await port
        ?.check({ secretKey: MEMBERSTACK_DEFAULT_TOKEN, baseUrl: sim.url, sandbox: 'true' })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'auth_invalid' });
    }
    expect(tables.map((x) => x.name).sort()).toEqual(['Members', 'Plans']);
    expect(col('Members', 'Email')).toMatchObject({ remoteId: 'email', fieldType: 'email' });
    expect(col('Members', 'Full name')).toMatchObject({ remoteId: 'fullName', fieldType: 'text' });
    expect(col('Members', 'First name')?.remoteId ?? col('Members', 'first-name')?.remoteId).toBe(
      'customFields.first-name',
    );
  });

  it('refuses a connection to an arbitrary Airtable address outside local mode, and unknown sandboxes', async () => {
    const port = t.ctx.connectors.get('airtable');
    // The registry of a production server: no custom base URL, the sandbox's own URL only.
    const { createConnectorRegistry } = await import('../../connectors/connector-registry');
    const production = createConnectorRegistry({
      allowPrivateHosts: false,
      airtable: { sandboxUrls: () => t.ctx.sandbox?.urls() ?? [] },
    }).get('airtable');
    const elsewhere = await production
      ?.check({ apiKey: 'patX', baseUrl: 'http://169.254.169.254/latest' })
      .catch((e: unknown) => e);
    expect(elsewhere).toMatchObject({ code: 'permission_denied' });
    const conn = await api(ada, 'POST', '/rest/sandbox-apps/airtable/connect');
    expect(port).toBeDefined();
    const bases = await api(ada, 'PATCH', `/rest/external-connections/${conn.id}/fetch-base-previews`, {});
    expect(bases.basePreviews).toHaveLength(1);

    const none = await t.app.inject({
      method: 'POST',
      url: '/rest/sandbox-apps/supabase/connect',
      headers: ada.auth,
    });
    expect(none.statusCode).toBe(404);
    const saved = t.ctx.sandbox;
    t.ctx.sandbox = null;
    try {
      expect((await api(ada, 'GET', '/rest/sandbox-apps')).available).toBe(false);
      const off = await t.app.inject({
        method: 'POST',
        url: '/rest/sandbox-apps/airtable/connect',
        headers: ada.auth,
      });
      expect(off.statusCode).toBe(404);
      expect(off.json().response.userFacingMessage).toMatch(/LOCKSTEP_SANDBOX=1/);
    } finally {
      t.ctx.sandbox = saved;
    }
  });
});
