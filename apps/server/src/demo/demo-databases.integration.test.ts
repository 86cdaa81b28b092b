import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { ensureDemoDatabases } from './demo-databases';

const url = (database = 'postgres') => {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${database}`;
  return u.toString();
};

async function rows(database: string, sql: string) {
  const client = new pg.Client({ connectionString: url(database) });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('demo databases', () => {
  it('seeds a CRM and a newsletter whose people overlap by email, once', async () => {
    await ensureDemoDatabases(url);
    const [contacts] = await rows('demo_crm', 'select count(*)::int as n from contacts');
    const [subs] = await rows('demo_newsletter', 'select count(*)::int as n from subscribers');
    expect(contacts?.n).toBe(120);
    expect(subs?.n).toBe(120);
    // Overlap after normalising emails the way matching does (trim, lower case).
    const crmEmails = new Set(
      (await rows('demo_crm', 'select email from contacts')).map((r) => r.email as string),
    );
    const overlap = (await rows('demo_newsletter', 'select email from subscribers')).filter((r) =>
      crmEmails.has((r.email as string).trim().toLowerCase()),
    );
    expect(overlap).toHaveLength(60);
    // Relations, enums and a generated column are there for the connector to discover.
    const [fk] = await rows(
      'demo_crm',
      `select count(*)::int as n from contacts where company_id is not null`,
    );
    expect(fk?.n).toBe(120);

    // A second start changes nothing, even after the user edited the data.
    await rows('demo_crm', `update contacts set full_name = 'Edited' where id = 1`);
    await ensureDemoDatabases(url);
    const [edited] = await rows('demo_crm', 'select full_name from contacts where id = 1');
    expect(edited?.full_name).toBe('Edited');
    expect((await rows('demo_crm', 'select count(*)::int as n from contacts'))[0]?.n).toBe(120);
  });
});
