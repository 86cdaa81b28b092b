import { DropTolerantClient } from '@lockstep/connectors/postgresql';
import type pg from 'pg';
import { ensureDatabase } from '../db/database';

export const DEMO_DATABASES = {
  demo_crm: {
    displayName: 'Demo CRM',
    description: 'A small CRM: companies and the contacts who work there, with lifecycle stages and owners.',
  },
  demo_newsletter: {
    displayName: 'Demo Newsletter',
    description:
      'A newsletter tool: organisations and their subscribers, with plans and opt-in dates. Many people are in both.',
  },
} as const;
export type DemoDatabase = keyof typeof DEMO_DATABASES;

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Radia',
  'Tim',
  'Frances',
  'Edsger',
  'Hedy',
  'John',
  'Annie',
  'Claude',
  'Donald',
  'Joan',
  'Niklaus',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Perlman',
  'Berners-Lee',
  'Allen',
  'Dijkstra',
  'Lamarr',
  'McCarthy',
  'Easley',
  'Shannon',
  'Knuth',
  'Clarke',
  'Wirth',
];
const COMPANIES = [
  'Analytical Engines',
  'Compiler Works',
  'Enigma Labs',
  'Orbital Math',
  'Kernel Co',
  'Apollo Software',
  'Unix Systems',
  'Abstraction Inc',
  'Bell Research',
  'Spanning Tree',
  'Hypertext Ltd',
  'Fortran Group',
  'Shortest Path',
  'Frequency Hop',
  'Lisp Machines',
  'Rocket Data',
  'Information Theory',
  'TeX Press',
  'Cambridge Nets',
  'Pascal Tools',
];

/** Deterministic so every fresh install shows the same demo. */
function* people(count: number) {
  for (let i = 0; i < count; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const n = Math.floor(i / (FIRST.length * LAST.length));
    const local = `${first}.${last}${n ? n : ''}`.toLowerCase().replaceAll(/[^a-z.0-9]/g, '');
    const email = `${local}@example.com`;
    yield { i, first, last, email };
  }
}

const CRM_SQL = `
create type lifecycle_stage as enum ('lead', 'qualified', 'customer', 'churned');
create table companies (
  id bigint generated always as identity primary key,
  name text not null unique,
  domain text,
  employees integer,
  annual_revenue numeric(14, 2),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create table contacts (
  id bigint generated always as identity primary key,
  email text not null unique,
  full_name text not null,
  phone text,
  stage lifecycle_stage not null default 'lead',
  company_id bigint references companies(id) on delete set null,
  do_not_contact boolean not null default false,
  last_contacted date,
  notes text,
  full_name_upper text generated always as (upper(full_name)) stored,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);`;

const NEWSLETTER_SQL = `
create type plan as enum ('free', 'supporter', 'founding');
create table organisations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  website text,
  created_at timestamp not null default now()
);
create table subscribers (
  id uuid primary key default gen_random_uuid(),
  email text not null unique,
  name text,
  plan plan not null default 'free',
  organisation_id uuid references organisations(id) on delete set null,
  opted_in_at timestamptz,
  open_rate numeric(5, 4),
  tags text[] not null default '{}',
  preferences jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);`;

async function seedCrm(client: pg.Client) {
  await client.query(CRM_SQL);
  for (const [i, name] of COMPANIES.entries()) {
    await client.query(
      'insert into companies (name, domain, employees, annual_revenue) values ($1, $2, $3, $4)',
      [
        name,
        `${name.toLowerCase().replaceAll(/[^a-z]/g, '')}.example.com`,
        10 + i * 37,
        (250000 + i * 123456.78).toFixed(2),
      ],
    );
  }
  const stages = ['lead', 'qualified', 'customer', 'churned'];
  for (const p of people(120)) {
    await client.query(
      `insert into contacts (email, full_name, phone, stage, company_id, do_not_contact, last_contacted, notes)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        p.email,
        `${p.first} ${p.last}`,
        p.i % 3 === 0 ? `+1 555 01${String(p.i).padStart(2, '0')}` : null,
        stages[p.i % stages.length],
        (p.i % COMPANIES.length) + 1,
        p.i % 17 === 0,
        p.i % 2 === 0
          ? `2026-${String((p.i % 12) + 1).padStart(2, '0')}-${String((p.i % 27) + 1).padStart(2, '0')}`
          : null,
        p.i % 5 === 0 ? `Met at the **${2020 + (p.i % 6)}** conference.` : null,
      ],
    );
  }
}

async function seedNewsletter(client: pg.Client) {
  await client.query(NEWSLETTER_SQL);
  const orgIds: string[] = [];
  for (const name of COMPANIES.slice(5)) {
    const r = await client.query('insert into organisations (name, website) values ($1, $2) returning id', [
      name,
      `https://${name.toLowerCase().replaceAll(/[^a-z]/g, '')}.example.com`,
    ]);
    orgIds.push(r.rows[0].id as string);
  }
  const plans = ['free', 'supporter', 'founding'];
  // People 60..179: the first 60 of them are also CRM contacts, some typed differently (case, spaces).
  for (const p of people(180)) {
    if (p.i < 60) continue;
    const email = p.i % 7 === 0 ? `  ${p.email.toUpperCase()} ` : p.email;
    await client.query(
      `insert into subscribers (email, name, plan, organisation_id, opted_in_at, open_rate, tags, preferences)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        email,
        // Some shared people have no name here (the CRM's name fills it); newsletter-only people all do,
        // since the CRM requires one.
        p.i % 4 === 0 && p.i < 120 ? null : `${p.first} ${p.last}`,
        plans[p.i % plans.length],
        orgIds[p.i % orgIds.length],
        new Date(Date.UTC(2025, p.i % 12, (p.i % 27) + 1, 9, 30)).toISOString(),
        (((p.i * 37) % 100) / 100).toFixed(4),
        p.i % 2 === 0 ? ['weekly'] : ['weekly', 'product-news'],
        JSON.stringify({ frequency: p.i % 2 === 0 ? 'weekly' : 'monthly' }),
      ],
    );
  }
}

/**
 * Creates the two demo databases in the embedded PostgreSQL on first start, so a new user can try
 * a real two-way sync in a couple of clicks. Existing demo databases are left as the user left them.
 */
export async function ensureDemoDatabases(adminUrl: (database?: string) => string): Promise<void> {
  for (const name of ['demo_crm', 'demo_newsletter'] as const) {
    await ensureDatabase(adminUrl('postgres'), name);
    await seedDemoDatabase(adminUrl(name), name);
  }
}

/** Seeds a demo database at `url` with `name`'s sample data, once (a database with tables is the user's now). */
export async function seedDemoDatabase(url: string, name: DemoDatabase): Promise<void> {
  const seed = name === 'demo_crm' ? seedCrm : seedNewsletter;
  const client = new DropTolerantClient({ connectionString: url });
  await client.connect();
  try {
    const seeded = await client.query(
      `select 1 from information_schema.tables where table_schema = 'public' limit 1`,
    );
    if (seeded.rowCount) return;
    await client.query('begin');
    await seed(client);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
