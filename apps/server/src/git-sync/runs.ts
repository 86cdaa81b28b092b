import { createHash } from 'node:crypto';
import type { TableConnector, WriteRequest } from '@lockstep/connectors';
import type { GitConflict, GitTableCount, GitTablePreviews } from '@lockstep/contract';
import {
  type CanonicalValue,
  DEFAULT_MASS_DELETE,
  FIELD_TYPES,
  type FieldMapping,
  type FieldType,
  type Link,
  normalizeValue,
  type RecordData,
  reconcile,
  type Shadow,
  type WriteOp,
} from '@lockstep/engine';
import type { Updateable } from 'kysely';
import type { Db } from '../db/database';
import type { GitSyncRunTable, Side } from '../db/schema';
import type { AppContext } from '../http/context';
import { PRIORITY, requestSyncRun } from '../jobs/sync-run';
import { rescanTables } from '../services/rescan';
import { pageSizeOf } from '../sync/page-size';
import { RunStop, sideConnector } from '../sync/side-connector';
import {
  columnNames,
  decodeSchema,
  decodeTable,
  encodeSchema,
  encodeTable,
  FileFormatError,
  fileNames,
  ID_COLUMN,
  SCHEMA_FILE,
  type SchemaDoc,
  type TableFile,
  tablesOf,
  text,
  utf8,
} from './files';
import { GitSyncError, openRepository, type Repository } from './repository';
import { cacheDirOf, type GitSyncRow, type GitSyncRunRow, repoSpecOf } from './store';

/** A run stopped by the user (cancel): it ends CANCELLED, nothing more written. */
class Cancelled extends Error {}

type RunDeps = Pick<AppContext, 'db' | 'secretBox' | 'runtimeConnectors' | 'config' | 'boss'>;

const asType = (t: string): FieldType =>
  (FIELD_TYPES as readonly string[]).includes(t) ? (t as FieldType) : 'json';

/** The tables a git sync writes (the mapped tables of its chosen sides), with their fields and connectors. */
async function plannedTables(db: Db, g: GitSyncRow): Promise<{ tables: TableFile[]; doc: SchemaDoc }> {
  const mappings = await db
    .selectFrom('table_mapping')
    .selectAll()
    .where('core_base_id', '=', g.core_base_id)
    .orderBy('created_at')
    .execute();
  const tableIds = [...new Set(mappings.flatMap((m) => [m.left_table_id, m.right_table_id]))];
  const tables = tableIds.length
    ? await db
        .selectFrom('external_table')
        .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
        .select([
          'external_table.id',
          'external_table.remote_id',
          'external_table.name',
          'external_base.side',
          'external_base.type',
        ])
        .where('external_table.id', 'in', tableIds)
        .execute()
    : [];
  const columns = tableIds.length
    ? await db
        .selectFrom('external_column')
        .selectAll()
        .where('external_table_id', 'in', tableIds)
        .orderBy('name')
        .orderBy('remote_id')
        .execute()
    : [];
  const chosen = tableIds
    .map((id) => tables.find((t) => t.id === id))
    .filter((t): t is (typeof tables)[number] => t !== undefined && g.sides.includes(t.side));
  const files = fileNames(
    chosen.map((t) => ({ side: t.side, name: t.name, remoteId: t.remote_id })),
    g.format,
  );
  const result: TableFile[] = chosen.map((t, i) => {
    const cols = columns.filter((c) => c.external_table_id === t.id);
    const names = columnNames(cols.map((c) => ({ name: c.name, id: c.remote_id })));
    return {
      side: t.side,
      tableId: t.id,
      remoteId: t.remote_id,
      name: t.name,
      app: t.type,
      file: files[i] as string,
      fields: cols.map((c, j) => ({
        id: c.remote_id,
        name: c.name,
        column: names[j] as string,
        type: asType(c.field_type),
        readOnly: c.read_only,
        options: c.options as TableFile['fields'][number]['options'],
      })),
    };
  });
  const columnMappings = mappings.length
    ? await db
        .selectFrom('column_mapping')
        .selectAll()
        .where(
          'table_mapping_id',
          'in',
          mappings.map((m) => m.id),
        )
        .execute()
    : [];
  const colName = (id: string) => columns.find((c) => c.id === id)?.name ?? id;
  const tableName = (id: string) => tables.find((t) => t.id === id)?.name ?? id;
  const fileOf = (id: string) => result.find((t) => t.tableId === id)?.file ?? null;
  const doc: SchemaDoc = {
    version: 1,
    format: g.format,
    tables: result.map((t) => ({
      side: t.side,
      app: t.app,
      tableId: t.tableId,
      remoteId: t.remoteId,
      name: t.name,
      file: t.file,
      fields: t.fields.map((f) => ({
        id: f.id,
        column: f.column,
        type: f.type,
        readOnly: f.readOnly ?? false,
        ...(f.options && Object.keys(f.options).length ? { options: f.options } : {}),
      })),
    })),
    mappings: mappings.map((m) => ({
      tableMappingId: m.id,
      left: { table: tableName(m.left_table_id), file: fileOf(m.left_table_id) },
      right: { table: tableName(m.right_table_id), file: fileOf(m.right_table_id) },
      direction: m.sync_direction,
      conflictWinnerSide: m.conflict_winner_side,
      fields: columnMappings
        .filter((c) => c.table_mapping_id === m.id)
        .map((c) => ({
          left: colName(c.left_column_id),
          right: colName(c.right_column_id),
          direction: c.sync_direction,
        })),
    })),
  };
  return { tables: result, doc };
}

/** The connector of a table's app, opened with its connection's credentials. */
async function connectorOf(deps: RunDeps, tableId: string): Promise<TableConnector> {
  const t = await deps.db
    .selectFrom('external_table')
    .innerJoin('external_base', 'external_base.id', 'external_table.external_base_id')
    .select([
      'external_table.id',
      'external_table.remote_id',
      'external_table.name',
      'external_base.id as base_id',
      'external_base.type',
      'external_base.side',
      'external_base.external_connection_id',
    ])
    .where('external_table.id', '=', tableId)
    .executeTakeFirst();
  if (!t) throw new RunStop('A table of this git sync is no longer connected. Fetch the schema again.');
  return sideConnector(
    { db: deps.db, secretBox: deps.secretBox, connectors: deps.runtimeConnectors },
    {
      externalBaseId: t.base_id,
      type: t.type,
      connectionId: t.external_connection_id,
      tableId: t.id,
      tableRemoteId: t.remote_id,
      tableName: t.name,
    },
    t.side,
  );
}

/** Every record of a table, read page by page from a full scan. */
async function readWholeTable(
  c: TableConnector,
  tableRemoteId: string,
  checkCancel: () => Promise<void>,
): Promise<RecordData[]> {
  const records: RecordData[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000_000; page++) {
    const p = await c.read(tableRemoteId, cursor, { pageSize: pageSizeOf(c) });
    records.push(...p.records);
    if (!p.hasMore) return records;
    cursor = p.nextCursor;
    await checkCancel();
  }
  return records;
}

/** Per-record row texts of a decoded file, to count what an upload changed. */
function rowKeys(
  t: TableFile,
  content: Uint8Array | undefined,
  format: 'csv' | 'jsonl',
): Map<string, string> {
  const out = new Map<string, string>();
  const body = text(content);
  if (body === undefined) return out;
  try {
    for (const r of decodeTable(t, body, format)) if (r.id !== null) out.set(r.id, JSON.stringify(r.fields));
  } catch {
    // A file edited out of shape: every record counts as new.
  }
  return out;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The current records of a git sync's tables as files: what an upload commits. */
async function snapshot(
  deps: RunDeps,
  run: GitSyncRunRow,
  g: GitSyncRow,
  previous: Map<string, Uint8Array>,
  checkCancel: () => Promise<void>,
) {
  const { tables, doc } = await plannedTables(deps.db, g);
  await setProgress(deps.db, run.id, { total: tables.length + 1 });
  const files = new Map<string, Uint8Array>();
  const counts: GitTableCount[] = [];
  for (const [i, t] of tables.entries()) {
    const c = await connectorOf(deps, t.tableId);
    const records = await readWholeTable(c, t.remoteId, checkCancel);
    const content = utf8(encodeTable(t, records, g.format));
    files.set(t.file, content);
    const before = rowKeys(t, previous.get(t.file), g.format);
    const after = rowKeys(t, content, g.format);
    let created = 0;
    let updated = 0;
    for (const [id, row] of after) {
      const old = before.get(id);
      if (old === undefined) created++;
      else if (old !== row) updated++;
    }
    const deleted = [...before.keys()].filter((id) => !after.has(id)).length;
    counts.push({
      side: t.side,
      table: t.name,
      file: t.file,
      records: records.length,
      created,
      updated,
      deleted,
    });
    await setProgress(deps.db, run.id, {
      done: i + 1,
      message: `Read ${t.name} (${plural(records.length, 'record')})`,
    });
    await checkCancel();
  }
  files.set(SCHEMA_FILE, utf8(encodeSchema(doc)));
  return { files, counts };
}

function uploadMessage(name: string, counts: GitTableCount[]): string {
  const total = counts.reduce((n, c) => n + c.records, 0);
  const lines = counts.map(
    (c) =>
      `${c.file}: ${plural(c.records, 'record')} (${c.created} new, ${c.updated} changed, ${c.deleted} deleted)`,
  );
  return `Lockstep upload of ${name}: ${plural(total, 'record')} in ${plural(counts.length, 'table')}\n\n${lines.join('\n')}\n`;
}

const sameFiles = (a: Map<string, Uint8Array>, b: Map<string, Uint8Array>) =>
  a.size === b.size &&
  [...a].every(([k, v]) => {
    const w = b.get(k);
    return w !== undefined && Buffer.from(v).equals(Buffer.from(w));
  });

async function setProgress(
  db: Db,
  runId: string,
  change: { done?: number; total?: number; message?: string },
): Promise<void> {
  await db
    .updateTable('git_sync_run')
    .set(change)
    .where('id', '=', runId)
    .where('status', '=', 'IN_PROGRESS')
    .execute();
}

async function coreBaseName(db: Db, id: string) {
  return (
    (await db.selectFrom('core_base').select('name').where('id', '=', id).executeTakeFirst())?.name ?? id
  );
}

/**
 * Upload: the current records of the chosen sides, read through their connectors, as one commit on
 * the branch. Refused when the branch's files changed since the last sync (edits made in git would
 * be overwritten): download them first.
 */
async function upload(
  deps: RunDeps,
  run: GitSyncRunRow,
  g: GitSyncRow,
  repo: Repository,
  check: () => Promise<void>,
) {
  const head = await repo.head();
  await deps.db.updateTable('git_sync_run').set({ base_commit: head }).where('id', '=', run.id).execute();
  const current = head ? await repo.readFolder(head, g.folder) : new Map<string, Uint8Array>();
  if (head && g.last_synced_commit && head !== g.last_synced_commit) {
    const last = await repo.readFolder(g.last_synced_commit, g.folder).catch(() => null);
    if (last && !sameFiles(last, current))
      throw new GitSyncError(
        `The files in ${g.folder} on ${g.branch} were changed in git since the last sync. Download them first, so the upload does not overwrite them.`,
      );
  }
  const { files, counts } = await snapshot(deps, run, g, current, check);
  await check();
  const commit = await repo.commitFolder(
    head,
    g.folder,
    files,
    uploadMessage(await coreBaseName(deps.db, g.core_base_id), counts),
  );
  const at = commit ?? head;
  await deps.db.updateTable('git_sync').set({ last_synced_commit: at }).where('id', '=', g.id).execute();
  return {
    commit: at,
    counts,
    message: commit
      ? `Committed ${commit.slice(0, 7)}`
      : 'Nothing changed since the last commit: no new commit',
  };
}

/** schema.json only (the tables' files as they are). */
async function fetchSchema(deps: RunDeps, run: GitSyncRunRow, g: GitSyncRow, repo: Repository) {
  const head = await repo.head();
  await deps.db
    .updateTable('git_sync_run')
    .set({ base_commit: head, total: 1 })
    .where('id', '=', run.id)
    .execute();
  const files = head ? await repo.readFolder(head, g.folder) : new Map<string, Uint8Array>();
  const { doc } = await plannedTables(deps.db, g);
  files.set(SCHEMA_FILE, utf8(encodeSchema(doc)));
  const commit = await repo.commitFolder(
    head,
    g.folder,
    files,
    `Lockstep schema of ${await coreBaseName(deps.db, g.core_base_id)}: ${plural(doc.tables.length, 'table')}\n`,
  );
  // The shadow moves along only if it was the head: the tables' files are unchanged by this commit.
  if (commit && head === g.last_synced_commit)
    await deps.db
      .updateTable('git_sync')
      .set({ last_synced_commit: commit })
      .where('id', '=', g.id)
      .execute();
  return {
    commit: commit ?? head,
    message: commit ? `Committed ${commit.slice(0, 7)}` : 'schema.json is up to date',
  };
}

/** A table pair's rule as it applies between a table's app and its file. */
async function ruleOf(db: Db, t: TableFile) {
  const m = await db
    .selectFrom('table_mapping')
    .selectAll()
    .where((eb) => eb.or([eb('left_table_id', '=', t.tableId), eb('right_table_id', '=', t.tableId)]))
    .orderBy('created_at')
    .executeTakeFirst();
  const owners = new Map<string, Side | null>();
  if (m) {
    const cms = await db
      .selectFrom('column_mapping')
      .innerJoin(
        'external_column',
        'external_column.id',
        t.side === 'left' ? 'column_mapping.left_column_id' : 'column_mapping.right_column_id',
      )
      .select(['external_column.remote_id', 'column_mapping.owner_side'])
      .where('column_mapping.table_mapping_id', '=', m.id)
      .execute();
    for (const c of cms) owners.set(c.remote_id, c.owner_side);
  }
  return {
    // The git copy of a table stands where the other app of its pair stands: the pair's winner side
    // is the app when it names this table's side, else git.
    appWins: (m?.conflict_winner_side ?? t.side) === t.side,
    review: m?.conflict_review ?? false,
    deleteProtection: m?.delete_protection ?? false,
    ownerOf: (fieldId: string): 'app' | 'git' | null => {
      const o = owners.get(fieldId);
      return o ? (o === t.side ? 'app' : 'git') : null;
    },
  };
}

// In the engine's terms below: left is the app, right is the git file.
const APP: Side = 'left';
const GIT: Side = 'right';

/**
 * Download: the files at the branch head against the last synced commit's (the shadow), reconciled
 * with the app's current records by the engine, field by field; what git changed is written to the
 * app through its connector (what the app changed stays, and the next upload carries it to git).
 */
async function download(
  deps: RunDeps,
  run: GitSyncRunRow,
  g: GitSyncRow,
  repo: Repository,
  check: () => Promise<void>,
) {
  const head = await repo.head();
  await deps.db.updateTable('git_sync_run').set({ base_commit: head }).where('id', '=', run.id).execute();
  if (!head) throw new GitSyncError(`The branch ${g.branch} has no commit yet. Upload first.`);
  if (!g.last_synced_commit)
    throw new GitSyncError('Nothing was uploaded yet: upload first, so edits made in git can be told apart.');
  const counts: GitTableCount[] = [];
  const conflicts: GitConflict[] = [];
  const problems: string[] = [];
  if (head === g.last_synced_commit)
    return { commit: head, counts, conflicts, problems, message: 'No commits since the last sync' };
  if (!(await repo.contains(head, g.last_synced_commit)))
    problems.push(
      `The branch no longer holds the last synced commit ${g.last_synced_commit.slice(0, 7)} (history rewritten?): compared with it all the same.`,
    );
  const [now, then] = await Promise.all([
    repo.readFolder(head, g.folder),
    repo.readFolder(g.last_synced_commit, g.folder).catch(() => {
      // Without the shadow every row would look new (and be created again): start over instead.
      throw new GitSyncError(
        `The last synced commit ${g.last_synced_commit?.slice(0, 7)} is no longer in the repository. Upload to start over.`,
      );
    }),
  ]);
  const doc = decodeSchema(text(then.get(SCHEMA_FILE))) ?? decodeSchema(text(now.get(SCHEMA_FILE)));
  if (!doc) throw new GitSyncError(`No ${SCHEMA_FILE} in ${g.folder}: upload first.`);
  const known = new Set(
    (doc.tables.length === 0
      ? []
      : await deps.db
          .selectFrom('external_table')
          .select('id')
          .where(
            'id',
            'in',
            doc.tables.map((t) => t.tableId),
          )
          .execute()
    ).map((t) => t.id),
  );
  const tables = tablesOf(doc).filter((t) => g.sides.includes(t.side) && known.has(t.tableId));
  await setProgress(deps.db, run.id, { total: tables.length });
  const written: string[] = [];
  let created = 0;
  for (const [i, t] of tables.entries()) {
    const headFile = now.get(t.file);
    const shadowFile = then.get(t.file);
    const rows = headFile ? decodeTable(t, text(headFile) ?? '', doc.format) : [];
    const count: GitTableCount = {
      side: t.side,
      table: t.name,
      file: t.file,
      records: rows.length,
      created: 0,
      updated: 0,
      deleted: 0,
    };
    counts.push(count);
    if (headFile === undefined && shadowFile !== undefined) {
      problems.push(
        `${t.file} was removed in git: its records are left as they are (delete rows, not the file).`,
      );
      continue;
    }
    if (headFile !== undefined && shadowFile === undefined) {
      // Never uploaded: its rows would all look new. The next upload writes the app's records here.
      problems.push(`${t.file} was not uploaded by Lockstep yet: upload before editing it in git.`);
      continue;
    }
    if (headFile && shadowFile && Buffer.from(headFile).equals(Buffer.from(shadowFile))) continue;
    const rule = await ruleOf(deps.db, t);
    const connector = await connectorOf(deps, t.tableId);
    const appRecords = await readWholeTable(connector, t.remoteId, check);
    const shadowRows = shadowFile ? decodeTable(t, text(shadowFile) ?? '', doc.format) : [];
    const fields: FieldMapping[] = t.fields.map((f) => ({
      id: f.id,
      left: f,
      right: f,
      direction: 'both',
      owner: rule.ownerOf(f.id) === 'app' ? APP : rule.ownerOf(f.id) === 'git' ? GIT : null,
    }));
    const norm = (f: (typeof t.fields)[number], v: unknown): CanonicalValue => {
      const n = normalizeValue(f.type, v ?? null, f.options);
      return n.ok ? n.value : null;
    };
    const links: Link[] = shadowRows
      .filter((r) => r.id !== null)
      .map((r) => {
        const shadow: Shadow = {};
        for (const f of t.fields) {
          const v = norm(f, r.fields[f.id]);
          shadow[f.id] = { l: v, r: v };
        }
        return { id: `link:${r.id}`, leftId: r.id, rightId: r.id, shadow, version: 0 };
      });
    const seen = new Set<string>();
    const gitRecords: RecordData[] = [];
    for (const r of rows) {
      const id = r.id ?? `new:${r.line}`;
      if (seen.has(id)) {
        problems.push(`${t.file}, line ${r.line}: the id ${id} is used twice; this row is left out.`);
        continue;
      }
      seen.add(id);
      gitRecords.push({ id, fields: r.fields as Record<string, CanonicalValue> });
    }
    const result = reconcile({
      mapping: {
        id: `git:${g.id}:${t.tableId}`,
        direction: 'both',
        fields,
        policy: {
          conflictWinner: rule.appWins ? APP : GIT,
          conflictReview: rule.review,
          deleteProtection: rule.deleteProtection,
          massDelete: DEFAULT_MASS_DELETE,
        },
      },
      links,
      left: { records: appRecords, deletedIds: [], scanComplete: true },
      right: { records: gitRecords, deletedIds: [], scanComplete: true },
      totalLinks: links.length,
    });
    const fieldName = (id: string) => t.fields.find((f) => f.id === id)?.column ?? id;
    for (const c of result.resolvedConflicts)
      conflicts.push({
        side: t.side,
        table: t.name,
        recordId: c.linkId.slice('link:'.length),
        field: fieldName(c.fieldMappingId),
        gitValue: c.right,
        appValue: c.left,
        outcome: c.winner === GIT ? 'git_won' : 'app_won',
      });
    for (const c of result.heldConflicts)
      conflicts.push({
        side: t.side,
        table: t.name,
        recordId: c.linkId.slice('link:'.length),
        field: fieldName(c.fieldMappingId),
        gitValue: c.right,
        appValue: c.left,
        outcome: 'held',
      });
    for (const p of result.problems)
      if (p.side === GIT) problems.push(`${t.file}, record ${p.recordId ?? '?'}: ${p.message}`);
    for (const d of result.deleteApprovals)
      if (d.side === APP) problems.push(`${t.name}: record ${d.remoteId} was not deleted. ${d.reason}`);
    // Only what git changed is written, to the app; the app's own changes go to git with the next upload.
    const ops = result.operations.filter((op) => op.side === APP);
    const outcome = await writeToApp(connector, t, ops, run.id, problems);
    count.created = outcome.created;
    count.updated = outcome.updated;
    count.deleted = outcome.deleted;
    created += outcome.created;
    if (outcome.created + outcome.updated + outcome.deleted > 0) written.push(t.tableId);
    await setProgress(deps.db, run.id, { done: i + 1, message: `Applied ${t.file}` });
    await check();
  }
  // The apps' writes are Lockstep's own, so their change capture does not report them: the tables
  // written are read in full by the sync's next run, which carries the edits to the other app.
  if (written.length) {
    await rescanTables(deps.db, g.owner_id, written);
    const base = await deps.db
      .selectFrom('core_base')
      .select('sync_state')
      .where('id', '=', g.core_base_id)
      .executeTakeFirst();
    if (base?.sync_state === 'on') await requestSyncRun(deps.boss, g.core_base_id, 'git-sync', PRIORITY.user);
  }
  let at = head;
  let message = `Applied ${head.slice(0, 7)}: ${plural(
    counts.reduce((n, c) => n + c.created + c.updated + c.deleted, 0),
    'change',
  )} written`;
  if (created > 0) {
    // Rows made in git have no id until the app gives them one: written back at once, so the next
    // download does not take them for new rows again.
    const { files, counts: after } = await snapshot(deps, run, g, now, check);
    const commit = await repo.commitFolder(
      head,
      g.folder,
      files,
      `${uploadMessage(await coreBaseName(deps.db, g.core_base_id), after).replace('Lockstep upload', 'Lockstep ids of records created from git,')}`,
    );
    if (commit) {
      at = commit;
      message += `; ids of the ${plural(created, 'new record')} committed as ${commit.slice(0, 7)}`;
    }
  }
  await deps.db.updateTable('git_sync').set({ last_synced_commit: at }).where('id', '=', g.id).execute();
  return { commit: at, counts, conflicts, problems, message };
}

/** The engine's writes for the app, batched as its connector takes them; failures become problems. */
async function writeToApp(
  connector: TableConnector,
  t: TableFile,
  ops: WriteOp[],
  runId: string,
  problems: string[],
) {
  const done = { created: 0, updated: 0, deleted: 0 };
  // Keys of this run: a later download's write of the same record is a new write, not a replay.
  const key = (k: string) => createHash('sha256').update(`git-sync|${runId}|${k}`).digest('hex').slice(0, 32);
  const requests: WriteRequest[] = ops.map((op) =>
    op.kind === 'create'
      ? // Empty cells of a new row are left to the app (its defaults: a key it numbers, say).
        {
          kind: 'create',
          fields: Object.fromEntries(Object.entries(op.fields).filter(([, v]) => v !== null)),
          idempotencyKey: key(op.idempotencyKey),
        }
      : op.kind === 'update'
        ? {
            kind: 'update',
            remoteId: op.remoteId,
            fields: op.fields,
            expected: op.expected,
            idempotencyKey: key(op.idempotencyKey),
          }
        : {
            kind: 'delete',
            remoteId: op.remoteId,
            expected: op.expected,
            idempotencyKey: key(op.idempotencyKey),
          },
  );
  const size = Math.max(1, connector.capabilities.batchSize);
  for (let i = 0; i < requests.length; i += size) {
    const batch = requests.slice(i, i + size);
    const results = await connector.write(t.remoteId, batch);
    for (const [j, r] of results.entries()) {
      const req = batch[j] as WriteRequest;
      if (r.ok) {
        if (req.kind === 'create') done.created++;
        else if (req.kind === 'update') done.updated++;
        else done.deleted++;
      } else {
        const which = req.kind === 'create' ? 'a new record' : `record ${req.remoteId}`;
        problems.push(`${t.name}: ${req.kind} of ${which} refused: ${r.error.userFacingMessage}`);
      }
    }
  }
  return done;
}

/** Tables and row counts in the repository's folder at the branch head. */
export async function tablePreviews(deps: RunDeps, g: GitSyncRow): Promise<GitTablePreviews> {
  const repo = await open(deps, g);
  const head = await repo.head();
  if (!head) return { commitId: null, tables: [] };
  const files = await repo.readFolder(head, g.folder);
  const doc = decodeSchema(text(files.get(SCHEMA_FILE)));
  const described = doc ? tablesOf(doc) : [];
  const out: GitTablePreviews['tables'] = [];
  for (const [file, content] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const m = /^(left|right)\/(.+)\.(csv|jsonl)$/.exec(file);
    if (!m) continue;
    const t = described.find((d) => d.file === file) ?? {
      side: m[1] as Side,
      tableId: '',
      remoteId: '',
      name: m[2] as string,
      app: '',
      file,
      fields: [],
    };
    let records: number;
    try {
      records = decodeTable(t, text(content) ?? '', m[3] as 'csv' | 'jsonl').length;
    } catch {
      records = 0;
    }
    out.push({ side: t.side, table: t.name, file: `${g.folder}/${file}`, records });
  }
  return { commitId: head, tables: out };
}

const open = (deps: RunDeps, g: GitSyncRow) =>
  openRepository(repoSpecOf(g, deps.secretBox), g.branch, {
    cacheDir: cacheDirOf(deps.config, g.id),
    allowPrivate: deps.config.environment === 'local' || deps.config.environment === 'test',
  });

/**
 * Runs one queued run to its end: COMPLETED with its commit and counts, FAILED with the reason, or
 * CANCELLED when the user cancelled it meanwhile (checked between tables and pages).
 */
export async function executeGitSyncRun(deps: RunDeps, runId: string): Promise<void> {
  const run = await deps.db
    .updateTable('git_sync_run')
    .set({ status: 'IN_PROGRESS', started_at: new Date() })
    .where('id', '=', runId)
    .where('status', '=', 'PENDING')
    .returningAll()
    .executeTakeFirst();
  if (!run) return; // cancelled before it started
  const check = async () => {
    const r = await deps.db
      .selectFrom('git_sync_run')
      .select('status')
      .where('id', '=', runId)
      .executeTakeFirst();
    if (r?.status !== 'IN_PROGRESS') throw new Cancelled();
  };
  const finish = (set: Updateable<GitSyncRunTable>) =>
    deps.db
      .updateTable('git_sync_run')
      .set({ ...set, finished_at: new Date() })
      .where('id', '=', runId)
      .where('status', '=', 'IN_PROGRESS')
      .execute();
  try {
    const g = await deps.db
      .selectFrom('git_sync')
      .selectAll()
      .where('id', '=', run.git_sync_id)
      .executeTakeFirstOrThrow();
    const repo = await open(deps, g);
    if (run.kind === 'upload') {
      const r = await upload(deps, run, g, repo, check);
      await finish({
        status: 'COMPLETED',
        commit_id: r.commit,
        counts: JSON.stringify(r.counts),
        message: r.message,
      });
    } else if (run.kind === 'download') {
      const r = await download(deps, run, g, repo, check);
      await finish({
        status: 'COMPLETED',
        commit_id: r.commit,
        counts: JSON.stringify(r.counts),
        conflicts: JSON.stringify(r.conflicts),
        problems: JSON.stringify(r.problems),
        message: r.message,
      });
    } else {
      const r = await fetchSchema(deps, run, g, repo);
      await finish({ status: 'COMPLETED', commit_id: r.commit, done: 1, message: r.message });
    }
  } catch (error) {
    if (error instanceof Cancelled) return;
    const known =
      error instanceof GitSyncError || error instanceof RunStop || error instanceof FileFormatError;
    const userFacing = (error as { userFacingMessage?: string }).userFacingMessage;
    await finish({
      status: 'FAILED',
      error: known
        ? (error as Error).message
        : (userFacing ?? `The run failed: ${error instanceof Error ? error.message : String(error)}`),
    });
  }
}

export { ID_COLUMN };
