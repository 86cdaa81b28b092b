import { createHash, randomBytes } from 'node:crypto';
import { startSupabaseSimulator } from '@lockstep/simulators';
import pg from 'pg';
import { createPostgresqlConnector, type PostgresqlConnector } from '../postgresql/postgresql-connector';
import { runConformanceSuite } from '../sdk/conformance/index';
import { createTestDatabase } from '../test-support/test-database';
import { createSupabasePort, type SupabaseItems, supabaseDatabaseItems } from './port';

// Supabase end to end behind the Management API simulator: OAuth with PKCE, Lockstep's own role set
// up through database/query, then the data path is PostgreSQL as that role. The table is edited out
// of band by another role of the project (as an app's users would), so change capture must work for
// writers other than Lockstep. PostgreSQL cannot be made to answer 429 or 5xx: those tests skip.
runConformanceSuite('Supabase', async () => {
  const adminUrl = new URL(await createTestDatabase('conf_supa'));

  const ref = `conf${randomBytes(8).toString('hex')}`;
  const sim = await startSupabaseSimulator({
    projects: { [ref]: { databaseUrl: adminUrl.toString(), name: 'Conformance' } },
  });

  // The project's own app user, who edits rows out of band.
  const appRole = `app_${randomBytes(5).toString('hex')}`;
  const service = new pg.Pool({ connectionString: adminUrl.toString(), max: 1 });
  await service.query(`create table items (
    id serial primary key,
    name text not null,
    email text unique,
    note text check (length(note) < 40))`);
  await service.query(`create role ${appRole} login password 'app-password'`);
  await service.query(`grant usage on schema public to ${appRole}`);
  await service.query(`grant select, insert, update, delete on items to ${appRole}`);
  await service.query(`grant usage on sequence items_id_seq to ${appRole}`);
  const appUrl = new URL(adminUrl.toString());
  appUrl.username = appRole;
  appUrl.password = 'app-password';
  const backend = new pg.Pool({ connectionString: appUrl.toString(), max: 2 });

  const port = createSupabasePort({
    apiUrl: sim.url,
    clientId: sim.client.clientId,
    clientSecret: sim.client.clientSecret,
    allowPrivateHosts: true,
    databaseSsl: 'disable',
  });
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = 'http://localhost:3000/oauth/supabase/callback';
  const back = await sim.authorize({
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
  });
  let items: SupabaseItems = await port.exchangeCode({
    code: back.get('code') as string,
    codeVerifier: verifier,
    redirectUri,
  });
  await port.discoverSchema(items, `${ref}:public`, async (next) => {
    items = next;
  });

  let n = 0;
  const sample = () => {
    n++;
    return { name: `Item ${n}`, email: `item${n}@example.com`, note: `note ${n}` };
  };
  const connectors: PostgresqlConnector[] = [];
  const connector = createPostgresqlConnector(supabaseDatabaseItems(items));
  connectors.push(connector);

  return {
    connector,
    tableId: 'public.items',
    sampleFields: sample,
    invalidFields: () => ({ name: null, email: `bad${++n}@example.com` }),
    async seed(count) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const f = sample();
        const r = await backend.query(
          'insert into items (name, email, note) values ($1, $2, $3) returning id',
          [f.name, f.email, f.note],
        );
        ids.push(String(r.rows[0].id));
      }
      return ids;
    },
    async mutate(id) {
      const note = `changed ${randomBytes(3).toString('hex')}`;
      await backend.query('update items set note = $1 where id = $2', [note, Number(id)]);
      return { note };
    },
    async remove(id) {
      await backend.query('delete from items where id = $1', [Number(id)]);
    },
    discover: () => port.discoverSchema(items, `${ref}:public`),
    async badAuthConnector() {
      const wrong = new URL(supabaseDatabaseItems(items).connectionString as string);
      wrong.password = 'not-the-password';
      const bad = createPostgresqlConnector({ connectionString: wrong.toString() });
      connectors.push(bad);
      return bad;
    },
    async close() {
      for (const c of connectors) await c.end();
      await backend.end();
      await service.end();
      await sim.close();
    },
  };
});
