import { createHash, randomBytes } from 'node:crypto';
import { type SupabaseSimulator, startSupabaseSimulator } from '@lockstep/simulators';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installChangeCapture } from '../postgresql/change-capture';
import { ConnectorError } from '../sdk/connector';
import { createTestDatabase } from '../test-support/test-database';
import { createSupabasePort, type SupabaseItems, supabaseDatabaseItems } from './port';

let sim: SupabaseSimulator;
let now = Date.UTC(2026, 0, 15, 9);
const refs = {
  shop: `shop${randomBytes(8).toString('hex')}`,
  blog: `blog${randomBytes(8).toString('hex')}`,
  depot: `depot${randomBytes(8).toString('hex')}`,
};
const urls: Record<string, string> = {};

const createDatabase = () => createTestDatabase('supa_port');

/**
 * A database whose service user is, as Supabase's `postgres`, no superuser: it may create roles and
 * owns the database (PostgreSQL 16 and later then give it ADMIN on the roles it creates, nothing more).
 */
async function serviceDatabase(): Promise<string> {
  const url = new URL(await createDatabase());
  const user = `supa_service_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`create role ${user} login password '${password}' createrole nosuperuser`);
  await admin.query(`alter database ${url.pathname.slice(1)} owner to ${user}`);
  await admin.end();
  url.username = user;
  url.password = password;
  return url.toString();
}

async function sql(ref: string, text: string) {
  const c = new pg.Client({ connectionString: urls[ref] });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

const port = () =>
  createSupabasePort({
    apiUrl: sim.url,
    clientId: sim.client.clientId,
    clientSecret: sim.client.clientSecret,
    allowPrivateHosts: true,
    databaseSsl: 'disable',
    now: () => now,
  });

async function connect(): Promise<SupabaseItems> {
  const verifier = randomBytes(32).toString('base64url');
  const back = await sim.authorize({
    redirectUri: 'http://localhost/cb',
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
  });
  return port().exchangeCode({
    code: back.get('code') as string,
    codeVerifier: verifier,
    redirectUri: 'http://localhost/cb',
  });
}

beforeAll(async () => {
  urls[refs.shop] = await createDatabase();
  urls[refs.blog] = await createDatabase();
  urls[refs.depot] = await serviceDatabase();
  sim = await startSupabaseSimulator({
    clock: { now: () => now },
    projects: {
      [refs.shop]: { databaseUrl: urls[refs.shop] as string, name: 'Shop' },
      [refs.blog]: { databaseUrl: urls[refs.blog] as string, name: 'Blog' },
      [refs.depot]: { databaseUrl: urls[refs.depot] as string, name: 'Depot' },
    },
  });
  await sql(
    refs.shop,
    `create schema sales; create table sales.orders (id serial primary key, total numeric);
    create schema secret; create table secret.keys (id serial primary key, k text);
    create schema auth; create table public.notes (id serial primary key, body text)`,
  );
});
afterAll(async () => sim?.close());

describe('Supabase port', () => {
  it("lists running projects' schemas as bases, Supabase's own schemas left out", async () => {
    const items = await connect();
    const bases = await port().listBases(items);
    const shop = bases.filter((b) => b.remoteId.startsWith(`${refs.shop}:`));
    expect(shop).toEqual([
      { remoteId: `${refs.shop}:public`, name: 'Shop / public' },
      { remoteId: `${refs.shop}:sales`, name: 'Shop / sales' },
      { remoteId: `${refs.shop}:secret`, name: 'Shop / secret' },
    ]);
    expect(bases.some((b) => b.remoteId === `${refs.blog}:public`)).toBe(true);
    expect((await port().listOrganizations(items)).length).toBe(1);
  });

  it('sets up a role with rights on the chosen schema only, then the connection is tied to the project', async () => {
    let items = await connect();
    const saved: SupabaseItems[] = [];
    const tables = await port().discoverSchema(items, `${refs.shop}:sales`, async (next) => {
      saved.push(next);
    });
    expect(tables.map((t) => t.remoteId)).toEqual(['sales.orders']);
    items = saved.at(-1) as SupabaseItems;
    expect(items).toMatchObject({ projectRef: refs.shop, projectName: 'Shop', schemas: '["sales"]' });
    expect(items.roleName).toMatch(/^lockstep_[0-9a-f]{12}$/);
    // Through the shared pooler in session mode, as `<role>.<ref>`: the project's direct host is
    // IPv6-only (the simulator's does not resolve, as from an IPv4-only server).
    const stored = new URL(items.connectionString as string);
    const pooler = sim.databaseAddress(refs.shop);
    expect([stored.hostname, Number(stored.port), stored.username, stored.pathname]).toEqual([
      pooler.host,
      pooler.port,
      `${items.roleName}.${refs.shop}`,
      '/postgres',
    ]);

    const db = new pg.Client({ connectionString: supabaseDatabaseItems(items).connectionString });
    await db.connect();
    try {
      await db.query('insert into sales.orders (total) values (10)');
      expect((await db.query('select count(*)::int as n from sales.orders')).rows[0].n).toBe(1);
      await expect(db.query('select * from secret.keys')).rejects.toMatchObject({ code: '42501' });
      const role = (
        await db.query(
          'select rolsuper, rolcreaterole, rolbypassrls from pg_roles where rolname = current_user',
        )
      ).rows[0];
      expect(role).toEqual({ rolsuper: false, rolcreaterole: false, rolbypassrls: false });
    } finally {
      await db.end();
    }

    // Another schema of the same project is granted on demand; another project is refused.
    const more = await port().discoverSchema(items, `${refs.shop}:public`, async (next) => {
      saved.push(next);
    });
    expect(more.map((t) => t.remoteId)).toEqual(['public.notes']);
    expect(saved.at(-1)?.schemas).toBe('["sales","public"]');
    const other = await port()
      .discoverSchema(saved.at(-1) as SupabaseItems, `${refs.blog}:public`)
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ConnectorError);
    expect((other as ConnectorError).userFacingMessage).toMatch(/set up for the project "Shop"/);
    expect(
      (await port().listBases(saved.at(-1) as SupabaseItems)).every((b) => b.remoteId.startsWith(refs.shop)),
    ).toBe(true);
  });

  it('moves a connection set up on the direct host to the pooler, with the same role and password', async () => {
    const saved: SupabaseItems[] = [];
    await port().discoverSchema(await connect(), `${refs.blog}:public`, async (next) => {
      saved.push(next);
    });
    const viaPooler = saved.at(-1) as SupabaseItems;
    const url = new URL(viaPooler.connectionString as string);
    // As stored before Lockstep used the pooler.
    const direct = new URL(url);
    direct.hostname = `db.${refs.blog}.supabase.co`;
    direct.port = '5432';
    direct.username = viaPooler.roleName as string;
    const moved: SupabaseItems[] = [];
    const tables = await port().discoverSchema(
      { ...viaPooler, connectionString: direct.toString() },
      `${refs.blog}:public`,
      async (next) => {
        moved.push(next);
      },
    );
    expect(tables).toBeInstanceOf(Array);
    expect(moved.at(-1)?.connectionString).toBe(url.toString());
    expect(moved.at(-1)?.roleName).toBe(viaPooler.roleName);
  });

  it('sets the password again when the role was changed in Supabase', async () => {
    let items = await connect();
    await port().discoverSchema(items, `${refs.shop}:sales`, async (next) => {
      items = next;
    });
    await sql(refs.shop, `alter role ${items.roleName} password 'changed-by-someone'`);
    const before = items.connectionString;
    const tables = await port().discoverSchema(items, `${refs.shop}:sales`, async (next) => {
      items = next;
    });
    expect(tables).toHaveLength(1);
    expect(items.connectionString).not.toBe(before);
  });

  it('refreshes an expiring token before a call and stores the new ones', async () => {
    const items = await connect();
    now += 86_400_000 - 60_000;
    const saved: SupabaseItems[] = [];
    await port().check(items, async (next) => {
      saved.push(next);
    });
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).not.toBe(items.accessToken);
    expect(saved[0]?.refreshToken).not.toBe(items.refreshToken);
    // The old refresh token is spent: a connection still holding it must connect again.
    now += 86_400_000;
    const stale = await port()
      .check(items)
      .catch((e: unknown) => e);
    expect(stale).toMatchObject({ code: 'auth_invalid' });
  });

  it('works with a personal access token, and maps API errors', async () => {
    expect(await port().check({ accessToken: sim.token })).toEqual({ accountEmail: null });
    const refused = await port()
      .check({ accessToken: 'sbp_revoked' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'auth_invalid' });
    sim.faults.next({ kind: 'rate_limit' });
    const limited = await port()
      .listBases({ accessToken: sim.token })
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'rate_limited' });
    expect((limited as ConnectorError).userFacingMessage).toMatch(/slow down/);
    const missing = await port()
      .discoverSchema({ accessToken: sim.token }, 'nosuchproject000000:public')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'not_found' });
  });

  it('reports a refused consent and a spent code', async () => {
    sim.state.consent = 'deny';
    const back = await sim.authorize({ redirectUri: 'http://localhost/cb', codeChallenge: 'x' });
    sim.state.consent = 'approve';
    expect(back.get('error')).toBe('access_denied');
    const spent = await port()
      .exchangeCode({ code: 'not-a-code', codeVerifier: 'v' })
      .catch((e: unknown) => e);
    expect(spent).toMatchObject({ code: 'auth_invalid' });
    const unconfigured = await createSupabasePort({ apiUrl: sim.url })
      .exchangeCode({ code: 'c', codeVerifier: 'v' })
      .catch((e: unknown) => e);
    expect(unconfigured).toMatchObject({ code: 'validation' });
  });
});

describe('Supabase port: deleting a connection', () => {
  // The depot project has a database of its own (so the roles here are the only Lockstep roles in
  // it), and a service user that is no superuser, as Supabase's.
  beforeAll(async () => {
    await sql(refs.depot, 'create schema stock; create table stock.items (id serial primary key, sku text)');
  });

  async function setUp(): Promise<SupabaseItems> {
    let items = await connect();
    await port().discoverSchema(items, `${refs.depot}:stock`, async (next) => {
      items = next;
    });
    return items;
  }
  /** As Lockstep's role: what a sync and schema generation leave behind (change capture, a table). */
  async function use(items: SupabaseItems, table: string) {
    const pool = new pg.Pool({ connectionString: supabaseDatabaseItems(items).connectionString });
    const client = await pool.connect();
    try {
      await installChangeCapture(client, 'stock.items', 'id');
      await client.query(`create table stock.${table} (id serial primary key, note text)`);
      await client.query(`insert into stock.${table} (note) values ('made by Lockstep')`);
    } finally {
      client.release();
      await pool.end();
    }
  }
  const roleExists = async (role: string | undefined) =>
    (await sql(refs.depot, `select 1 from pg_roles where rolname = '${role}'`)).rowCount === 1;
  const ownerOf = async (relation: string) =>
    (
      await sql(
        refs.depot,
        `select pg_get_userbyid(relowner) as owner from pg_class where oid = '${relation}'::regclass`,
      )
    ).rows[0]?.owner as string;

  it('drops the role; its tables stay, change capture passes to the Lockstep role still using it', async () => {
    const first = await setUp();
    await use(first, 'made_by_first');
    const second = await setUp();
    expect(first.roleName).not.toBe(second.roleName);

    expect(await port().removeAccess(first)).toEqual({ leftBehind: null });
    expect(await roleExists(first.roleName)).toBe(false);
    // The table schema generation made is the user's data: kept, owned by the service user now.
    expect((await sql(refs.depot, 'select note from stock.made_by_first')).rows).toEqual([
      { note: 'made by Lockstep' },
    ]);
    expect(await ownerOf('stock.made_by_first')).not.toMatch(/^lockstep_/);
    // Change capture is the other role's now, and still records the users' edits.
    const schemaOwner = await sql(
      refs.depot,
      `select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = 'lockstep'`,
    );
    expect(schemaOwner.rows[0]?.owner).toBe(second.roleName);
    expect(await ownerOf('lockstep.changes')).toBe(second.roleName);
    await sql(refs.depot, `insert into stock.items (sku) values ('A-1')`);
    const db = new pg.Client({ connectionString: supabaseDatabaseItems(second).connectionString });
    await db.connect();
    try {
      const changes = await db.query(`select table_name, op from lockstep.changes order by id desc limit 1`);
      expect(changes.rows).toEqual([{ table_name: 'stock.items', op: 'I' }]);
    } finally {
      await db.end();
    }

    // The last Lockstep role: change capture goes too, with its triggers; the data stays.
    expect(await port().removeAccess(second)).toEqual({ leftBehind: null });
    expect(await roleExists(second.roleName)).toBe(false);
    expect((await sql(refs.depot, `select 1 from pg_namespace where nspname = 'lockstep'`)).rowCount).toBe(0);
    expect(
      (
        await sql(
          refs.depot,
          `select 1 from pg_trigger where tgrelid = 'stock.items'::regclass and not tgisinternal`,
        )
      ).rowCount,
    ).toBe(0);
    await sql(refs.depot, `insert into stock.items (sku) values ('A-2')`);
    expect((await sql(refs.depot, 'select count(*)::int as n from stock.items')).rows[0].n).toBe(2);
    // Again (a retried delete) or a connection that never chose a project: nothing to do.
    expect(await port().removeAccess(second)).toEqual({ leftBehind: null });
    expect(await port().removeAccess(await connect())).toEqual({ leftBehind: null });
  });

  it('takes the rights and login of a role it cannot drop, and says what to remove by hand', async () => {
    const items = await setUp();
    // The role owns something in another database of the project: DROP ROLE refuses.
    const elsewhere = await createDatabase();
    const c = new pg.Client({ connectionString: elsewhere });
    await c.connect();
    await c.query(`create table kept (id int); alter table kept owner to ${items.roleName}`);
    await c.end();

    const { leftBehind } = await port().removeAccess(items);
    expect(leftBehind).toMatch(
      new RegExp(`role "${items.roleName}" in the Supabase project "Depot" can no longer log in`),
    );
    expect(leftBehind).toMatch(
      /could not be dropped \(role ".*" cannot be dropped because some objects depend on it\)/,
    );
    expect(leftBehind).toContain(`drop role "${items.roleName}";`);
    const role = await sql(
      refs.depot,
      `select rolcanlogin, has_table_privilege(rolname, 'stock.items', 'select') as can_read
         from pg_roles where rolname = '${items.roleName}'`,
    );
    expect(role.rows).toEqual([{ rolcanlogin: false, can_read: false }]);
    // Once that is gone, deleting again drops it.
    const again = new pg.Client({ connectionString: elsewhere });
    await again.connect();
    await again.query('drop table kept');
    await again.end();
    expect(await port().removeAccess(items)).toEqual({ leftBehind: null });
    expect(await roleExists(items.roleName)).toBe(false);
  });

  it('says what to remove by hand when Supabase refuses (a revoked token), and leaves the role', async () => {
    const items = await setUp();
    sim.faults.next({
      status: 403,
      body: { message: 'Forbidden resource' },
      path: /database\/query/,
      count: 5,
    });
    const { leftBehind } = await port().removeAccess(items);
    sim.faults.clear();
    expect(leftBehind).toMatch(
      new RegExp(
        `could not remove its database role "${items.roleName}" from the Supabase project "Depot" \\(Your Supabase account may not do this: Forbidden resource\\)`,
      ),
    );
    expect(leftBehind).toContain(`reassign owned by "${items.roleName}" to postgres;`);
    expect(await roleExists(items.roleName)).toBe(true);
    expect(await port().removeAccess(items)).toEqual({ leftBehind: null });
    expect(await roleExists(items.roleName)).toBe(false);
  });
});
