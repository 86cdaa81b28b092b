import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';

/** A database of the run's embedded PostgreSQL, by name. */
export function databaseUrl(database: string): string {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${database}`;
  return u.toString();
}

/** Polls `check` until it holds; fails with `what` after `ms`. */
export async function until(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

/** One query on its own connection (the test plays a user editing the app's database). */
export async function query(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON answers, as Fastify's inject gives them to every test
export type Api = (method: Method, url: string, payload?: object) => Promise<any>;

/** REST calls as a signed-in user; an error answer fails the test with its body. */
export function apiAs(app: FastifyInstance, auth: Record<string, string>): Api {
  return async (method, url, payload) => {
    const res = await app.inject({
      method,
      url,
      headers: payload ? { ...auth, 'content-type': 'application/json' } : auth,
      ...(payload ? { payload } : {}),
    });
    if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
}

/**
 * A sync of the `people` tables (email, name) of two PostgreSQL databases, set up over REST as a
 * user would: connections, attached schemas, email and name mapped, matched on email. Left off.
 */
export async function setUpPeopleSync(
  api: Api,
  urls: { left: string; right: string },
  options: {
    name: string;
    conflictWinnerSide?: 'left' | 'right';
    /** More connection items per side, e.g. `{ right: { changeCapture: 'logical' } }`. */
    items?: Partial<Record<'left' | 'right', Record<string, string>>>;
  },
): Promise<{ id: string }> {
  const core = await api('POST', '/rest/core-bases', { name: options.name });
  for (const side of ['left', 'right'] as const) {
    const conn = await api('POST', '/rest/external-connections', {
      type: 'postgresql',
      connectionItems: { connectionString: urls[side], ...options.items?.[side] },
    });
    await api('POST', '/rest/external-bases', {
      type: 'postgresql',
      name: side,
      remoteId: 'public',
      coreBaseId: core.id,
      externalConnectionId: conn.id,
      side,
    });
  }
  const full = await api('GET', `/rest/core-bases/${core.id}?detailLevel=fullBaseSchema`);
  const table = (s: 'leftExternalBase' | 'rightExternalBase') => full[s].externalTables[0];
  const col = (s: 'leftExternalBase' | 'rightExternalBase', name: string) =>
    table(s).externalColumns.find((c: { name: string }) => c.name === name).id;
  await api('PATCH', `/rest/core-bases/${core.id}`, {
    mappings: {
      tableMappings: [
        {
          leftTableId: table('leftExternalBase').id,
          rightTableId: table('rightExternalBase').id,
          matchOnFieldId: col('leftExternalBase', 'email'),
          ...(options.conflictWinnerSide ? { conflictWinnerSide: options.conflictWinnerSide } : {}),
          columnMappings: ['email', 'name'].map((n) => ({
            leftColumnId: col('leftExternalBase', n),
            rightColumnId: col('rightExternalBase', n),
          })),
        },
      ],
    },
  });
  return { id: core.id };
}

/** A table of a base as the REST schema answers it. */
export type SchemaTable = { id: string; name: string; externalColumns: { id: string; name: string }[] };

/** The id of a table's field by name; fails naming the fields there when it is missing. */
export function fieldId(table: SchemaTable, name: string): string {
  const c = table.externalColumns.find((x) => x.name === name);
  if (!c) throw new Error(`no field ${name} in ${table.name}: ${table.externalColumns.map((x) => x.name)}`);
  return c.id;
}

/**
 * A sync of an app (left, through a connection made already) with a PostgreSQL database (right),
 * set up over REST as a user would: a PostgreSQL connection, both bases attached, and each table
 * pair mapped by name (`fields`: app field, PostgreSQL column), matched on the app field `matchOn`
 * when given. Left off.
 */
export async function setUpAppPostgresSync(
  api: Api,
  options: {
    name: string;
    app: { type: string; name: string; connectionId: string; remoteId: string };
    pgUrl: string;
    tables: { left: string; right: string; fields: [string, string][]; matchOn?: string }[];
  },
): Promise<{ id: string; left: SchemaTable[]; right: SchemaTable[] }> {
  const pgConn = await api('POST', '/rest/external-connections', {
    type: 'postgresql',
    connectionItems: { connectionString: options.pgUrl },
  });
  const core = await api('POST', '/rest/core-bases', { name: options.name });
  await api('POST', '/rest/external-bases', {
    type: options.app.type,
    name: options.app.name,
    remoteId: options.app.remoteId,
    coreBaseId: core.id,
    externalConnectionId: options.app.connectionId,
    side: 'left',
  });
  const full = await api('POST', '/rest/external-bases', {
    type: 'postgresql',
    name: 'PostgreSQL',
    remoteId: 'public',
    coreBaseId: core.id,
    externalConnectionId: pgConn.id,
    side: 'right',
  });
  const left = full.leftExternalBase.externalTables as SchemaTable[];
  const right = full.rightExternalBase.externalTables as SchemaTable[];
  const table = (tables: SchemaTable[], name: string) => {
    const found = tables.find((x) => x.name === name);
    if (!found) throw new Error(`no table ${name}: ${tables.map((x) => x.name)}`);
    return found;
  };
  await api('PATCH', `/rest/core-bases/${core.id}`, {
    mappings: {
      tableMappings: options.tables.map((pair) => {
        const [lt, rt] = [table(left, pair.left), table(right, pair.right)];
        return {
          leftTableId: lt.id,
          rightTableId: rt.id,
          ...(pair.matchOn ? { matchOnFieldId: fieldId(lt, pair.matchOn) } : {}),
          columnMappings: pair.fields.map(([l, r]) => ({
            leftColumnId: fieldId(lt, l),
            rightColumnId: fieldId(rt, r),
          })),
        };
      }),
    },
  });
  return { id: core.id as string, left, right };
}
