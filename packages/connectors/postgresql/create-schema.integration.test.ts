import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../test-support/test-database';
import { addColumns, createTables, planAddColumns, planCreateTables } from './create-schema';
import { discoverTables } from './schema';

let connectionString = '';

beforeAll(async () => {
  connectionString = await createTestDatabase('cs');
});

describe('schema generation on PostgreSQL', () => {
  it('plans quoted identifiers, an identity key, and unique names', () => {
    const plan = planCreateTables('public', [
      {
        name: 'Contacts "VIP"',
        columns: [
          { name: 'id', type: 'text' },
          { name: 'First Name', type: 'text' },
          { name: 'first name', type: 'text' },
          { name: 'First Name', type: 'email' },
          { name: '', type: 'number' },
        ],
      },
    ]);
    expect(plan.sql[0]).toContain('create table "public"."Contacts ""VIP"""');
    expect(plan.tables[0]?.primaryKey).toBe('lockstep_id');
    expect(plan.tables[0]?.columns.map((c) => c.name)).toEqual([
      'id',
      'First Name',
      'first name',
      'First Name_2',
      'field_5',
    ]);
    const add = planAddColumns('public', 't', [{ name: 'email', type: 'email' }], ['id', 'email']);
    expect(add.sql).toEqual(['alter table "public"."t" add column "email_2" text']);
    expect(planCreateTables('s', [{ name: 'x'.repeat(80), columns: [] }]).tables[0]?.name).toHaveLength(63);
  });

  it('creates tables and adds columns that discovery reads back as the same or compatible types', async () => {
    const created = await createTables({ connectionString }, 'public', [
      {
        name: 'People',
        columns: [
          { name: 'Email', type: 'email' },
          { name: 'Score', type: 'number' },
          { name: 'Paid', type: 'currency', options: { currencyDigits: 2 } },
          { name: 'Active', type: 'boolean' },
          { name: 'Born', type: 'date' },
          { name: 'Seen at', type: 'datetime' },
          { name: 'Tags', type: 'multi_select' },
          { name: 'Stage', type: 'single_select' },
          { name: 'Extra', type: 'json' },
        ],
      },
    ]);
    expect(created[0]).toMatchObject({ remoteId: 'public.People', primaryKey: 'id' });
    // Two tables with one bad one: nothing is created.
    await expect(
      createTables({ connectionString }, 'public', [
        { name: 'Fresh', columns: [] },
        { name: 'People', columns: [] },
      ]),
    ).rejects.toMatchObject({ name: 'ConnectorError' });
    const added = await addColumns({ connectionString }, 'public', 'People', [
      { name: 'Email', type: 'text' },
      { name: 'Notes', type: 'rich_text' },
    ]);
    expect(added.map((c) => c.name)).toEqual(['Email_2', 'Notes']);
    await expect(
      addColumns({ connectionString }, 'public', 'Nope', [{ name: 'x', type: 'text' }]),
    ).rejects.toMatchObject({ code: 'not_found' });

    const pool = new pg.Pool({ connectionString });
    try {
      const tables = await discoverTables(pool, 'public');
      expect(tables.map((t) => t.name)).toEqual(['People']);
      const types = Object.fromEntries((tables[0]?.fields ?? []).map((f) => [f.name, f.fieldType]));
      expect(types).toEqual({
        id: 'number',
        Email: 'text',
        Score: 'number',
        Paid: 'number',
        Active: 'boolean',
        Born: 'date',
        'Seen at': 'datetime',
        Tags: 'multi_select',
        Stage: 'text',
        Extra: 'json',
        Email_2: 'text',
        Notes: 'text',
      });
      expect(tables[0]?.fields.find((f) => f.name === 'id')?.readOnly).toBe(true);
      expect(tables[0]?.extras.unsyncable).toBeUndefined();
    } finally {
      await pool.end();
    }
  });
});
