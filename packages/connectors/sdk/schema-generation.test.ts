import {
  startAirtableSimulator,
  startGoogleSheetsSimulator,
  startNotionSimulator,
} from '@lockstep/simulators';
import { describe, expect, it } from 'vitest';
import { createAirtablePort } from '../airtable/port';
import { createGoogleSheetsPort } from '../google-sheets/port';
import { createNotionPort } from '../notion/port';
import { nameAllocator, type SchemaTable } from './schema-generation';

// Schema generation into the apps, each port against its simulator: a table made from canonical
// fields in the app's own types, a field added to it, names the app would refuse made valid.
const contacts: SchemaTable = {
  name: 'Contacts',
  columns: [
    { name: 'Email', type: 'email' },
    { name: 'Full name', type: 'text' },
    { name: 'Score', type: 'number', options: { precision: 2 } },
    { name: 'Price', type: 'currency', options: { currencyDigits: 2, currencyCode: 'EUR' } },
    { name: 'Active', type: 'boolean' },
    { name: 'Stage', type: 'single_select', options: { choices: ['Lead', 'Won, finally'] } },
    { name: 'Tags', type: 'multi_select', options: { choices: ['a', 'b'] } },
    { name: 'Born', type: 'date' },
    { name: 'Seen at', type: 'datetime' },
    { name: 'email', type: 'text' },
  ],
};

describe('nameAllocator', () => {
  it('trims, replaces forbidden characters, cuts to the limit and suffixes taken names', () => {
    const next = nameAllocator({ maxLength: 6, forbidden: /,/g, caseInsensitive: true }, ['Name']);
    expect(next('  a,b  ', 'x')).toBe('a b');
    expect(next('NAME', 'x')).toBe('NAME 2');
    expect(next('abcdefghij', 'x')).toBe('abcdef');
    expect(next('abcdefghij', 'x')).toBe('abcd 2');
    expect(next('   ', 'Field 1')).toBe('Field');
  });
});

describe('Airtable: createTables and addFields against the simulator', () => {
  it('makes the table with Airtable types and required options, renames a clash, adds a field', async () => {
    const sim = await startAirtableSimulator({ seed: { contacts: 2 } });
    try {
      const port = createAirtablePort({ apiUrl: sim.url });
      const items = { apiKey: sim.token };
      const baseId = sim.crm?.baseId as string;
      // "Contacts" exists in the seeded base: the new table is "Contacts 2".
      const [made] = await port.createTables(items, baseId, [contacts]);
      expect(made?.name).toBe('Contacts 2');
      expect(made?.requestedName).toBe('Contacts');
      const table = sim.state.table(baseId, made?.name as string);
      const byName = Object.fromEntries(table.fields.map((f) => [f.name, f]));
      expect(table.primaryFieldId).toBe(byName.Email?.id); // the first field that may be primary
      expect(byName.Score).toMatchObject({ type: 'number', options: { precision: 2 } });
      expect(byName.Price).toMatchObject({ type: 'currency', options: { precision: 2, symbol: '€' } });
      expect(byName.Active?.type).toBe('checkbox');
      expect(byName.Stage?.type).toBe('singleSelect');
      expect(((byName.Stage?.options?.choices ?? []) as { name: string }[]).map((c) => c.name)).toEqual([
        'Lead',
        'Won, finally',
      ]);
      expect(byName['Seen at']).toMatchObject({ type: 'dateTime', options: { timeZone: 'utc' } });
      // "email" clashes with "Email" (Airtable compares names case-insensitively).
      expect(made?.columns.at(-1)).toMatchObject({ name: 'email 2', requestedName: 'email' });
      expect(made?.columns.map((c) => c.remoteId)).toEqual(
        contacts.columns.map((_, i) => table.fields.find((f) => f.name === made?.columns[i]?.name)?.id),
      );

      const added = await port.addFields(items, made?.remoteId as string, [
        { name: 'Score', type: 'number' },
        { name: 'Notes', type: 'rich_text' },
      ]);
      expect(added.map((a) => [a.name, a.appType])).toEqual([
        ['Score 2', 'number'],
        ['Notes', 'multilineText'],
      ]);
      // Discovery reads the new fields back as the canonical types they were made from.
      const found = (await port.discoverSchema(items, baseId)).find((t) => t.name === 'Contacts 2');
      const types = Object.fromEntries((found?.fields ?? []).map((f) => [f.name, f.fieldType]));
      expect(types).toMatchObject({
        Email: 'email',
        Score: 'number',
        Price: 'currency',
        Active: 'boolean',
        Stage: 'single_select',
        Tags: 'multi_select',
        Born: 'date',
        'Seen at': 'datetime',
      });
    } finally {
      await sim.close();
    }
  });

  it('adds a text primary field when no field may be primary', async () => {
    const sim = await startAirtableSimulator({ seed: { contacts: 1 } });
    try {
      const port = createAirtablePort({ apiUrl: sim.url });
      const [made] = await port.createTables({ apiKey: sim.token }, sim.crm?.baseId as string, [
        { name: 'Flags', columns: [{ name: 'On', type: 'boolean' }] },
      ]);
      const table = sim.state.table(sim.crm?.baseId as string, 'Flags');
      expect(table.fields.map((f) => [f.name, f.type])).toEqual([
        ['Name', 'singleLineText'],
        ['On', 'checkbox'],
      ]);
      expect(made?.columns).toEqual([expect.objectContaining({ name: 'On', appType: 'checkbox' })]);
      // A field that may be primary, not first: it is moved first; the answer keeps request order.
      const [tasks] = await port.createTables({ apiKey: sim.token }, sim.crm?.baseId as string, [
        {
          name: 'Tasks',
          columns: [
            { name: 'Done', type: 'boolean' },
            { name: 'Title', type: 'text' },
          ],
        },
      ]);
      const t2 = sim.state.table(sim.crm?.baseId as string, 'Tasks');
      expect(t2.fields.map((f) => f.name)).toEqual(['Title', 'Done']);
      expect(t2.primaryFieldId).toBe(t2.fields[0]?.id);
      expect(tasks?.columns.map((c) => [c.name, c.appType, c.remoteId])).toEqual([
        ['Done', 'checkbox', t2.fields[1]?.id],
        ['Title', 'singleLineText', t2.fields[0]?.id],
      ]);
    } finally {
      await sim.close();
    }
  });
});

describe('Notion: createTables and addFields against the simulator', () => {
  it('makes a data source in the database with one title property and Notion types', async () => {
    const sim = await startNotionSimulator({ seed: { people: 2 }, rateLimit: false });
    try {
      const port = createNotionPort({ apiUrl: sim.url });
      const items = { internalToken: sim.token };
      const databaseId = sim.workspace?.peopleDatabaseId as string;
      const [made] = await port.createTables(items, databaseId, [contacts]);
      const ds = sim.state.dataSource(made?.remoteId as string);
      const byName = Object.fromEntries(ds.properties.map((p) => [p.name, p]));
      expect(ds.properties.filter((p) => p.type === 'title').map((p) => p.name)).toEqual(['Full name']);
      expect(byName.Email?.type).toBe('email');
      expect(byName.Price).toMatchObject({ type: 'number', number: { format: 'euro' } });
      expect(byName.Active?.type).toBe('checkbox');
      // Notion refuses commas in option names: the option is renamed.
      expect(byName.Stage?.options?.map((o) => o.name)).toEqual(['Lead', 'Won finally']);
      expect(byName['Seen at']?.type).toBe('date');
      // Notion property names are exact: "email" and "Email" are two properties.
      expect(made?.columns.at(-1)).toMatchObject({ name: 'email', requestedName: 'email' });
      const tables = await port.discoverSchema(items, databaseId);
      expect(tables.map((t) => t.remoteId)).toContain(made?.remoteId);

      const added = await port.addFields(items, made?.remoteId as string, [
        { name: 'Email', type: 'email' },
        { name: 'Paid', type: 'boolean' },
      ]);
      expect(added.map((a) => [a.name, a.appType])).toEqual([
        ['Email 2', 'email'],
        ['Paid', 'checkbox'],
      ]);
      expect(sim.state.dataSource(made?.remoteId as string).properties.map((p) => p.name)).toContain('Paid');
    } finally {
      await sim.close();
    }
  });
});

describe('Google Sheets: createTables and addFields against the simulator', () => {
  it('adds a sheet with a header row and number formats, then header cells', async () => {
    const sim = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 2 } });
    try {
      const port = createGoogleSheetsPort({ apiUrl: sim.url, driveUrl: sim.url });
      const items = { accessToken: sim.token };
      const ss = sim.sales?.spreadsheetId as string;
      const long = 'L'.repeat(120);
      const [made, second] = await port.createTables(items, ss, [contacts, { ...contacts, name: long }]);
      expect(made?.name).toBe('Contacts');
      expect(second?.name).toBe('L'.repeat(100)); // sheet titles are at most 100 characters
      expect(second?.requestedName).toBe(long);
      // Typed columns carry a number format below the header; text columns none.
      const grid = sim.state.sheet(ss, 'Contacts');
      const fmt = (name: string) =>
        grid.rows[1]?.cells[contacts.columns.findIndex((c) => c.name === name)]?.fmt;
      expect(fmt('Score')).toMatchObject({ type: 'NUMBER' });
      expect(fmt('Price')).toMatchObject({ type: 'CURRENCY', pattern: '"€"#,##0.00' });
      expect(fmt('Born')).toMatchObject({ type: 'DATE' });
      expect(fmt('Seen at')).toMatchObject({ type: 'DATE_TIME' });
      expect(fmt('Full name')).toBeUndefined();
      const tables = await port.discoverSchema(items, ss);
      const sheet = tables.find((t) => t.remoteId === made?.remoteId);
      expect(sheet?.fields.map((f) => f.name)).toEqual(contacts.columns.map((c) => c.name));
      const added = await port.addFields(items, made?.remoteId as string, [
        { name: 'Score', type: 'number' },
        { name: 'Notes', type: 'text' },
      ]);
      expect(added.map((a) => a.name)).toEqual(['Score 2', 'Notes']);
      const again = (await port.discoverSchema(items, ss)).find((t) => t.remoteId === made?.remoteId);
      expect(again?.fields.map((f) => f.name).slice(-2)).toEqual(['Score 2', 'Notes']);
    } finally {
      await sim.close();
    }
  });
});
