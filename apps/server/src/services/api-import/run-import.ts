import type { TableConnector, WriteRequest } from '@lockstep/connectors';
import type { ApiImportCounts } from '@lockstep/contract';
import {
  type CanonicalValue,
  convertValue,
  FIELD_TYPES,
  type FieldSpec,
  type FieldType,
  normalizeValue,
  valuesEqual,
} from '@lockstep/engine';
import type { AppContext } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { connectionItemsSaver, type SealedSecrets } from '../external-connections';
import { updateProgress } from '../progress';
import { describeFailure } from './errors';
import { fetchRecords, idKey } from './fetch-records';
import { openConfig } from './store';
import { type TargetField, targetTable } from './target';

export type RunDeps = Pick<AppContext, 'db' | 'secretBox' | 'connectors' | 'runtimeConnectors' | 'config'>;
export type RunData = { importId: string; trackingId: string };

export const allowPrivateHosts = (config: AppContext['config']) =>
  config.environment === 'local' || config.environment === 'test';

const asFieldType = (t: string): FieldType =>
  (FIELD_TYPES as readonly string[]).includes(t) ? (t as FieldType) : 'json';
const READ_PAGE = 1000;
const MAX_FAILURES_SHOWN = 5;

/** A canonical value as a match key: text for text, numbers and booleans; stable JSON otherwise. */
function matchKey(value: CanonicalValue): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object' && !Array.isArray(value) && 'json' in value) return idKey(value.json);
  return idKey(value);
}

/**
 * One run of an import: reads every page of the API (up to its caps), reads the target table, and
 * writes through the target app's runtime connector: a record whose id is already in the table's
 * match field is updated where its mapped fields differ, a new one is created; nothing is deleted.
 * Progress and the outcome go to the tracker and to the import's row.
 */
export async function runApiImport(deps: RunDeps, data: RunData): Promise<ApiImportCounts | null> {
  const { db } = deps;
  const row = await db
    .selectFrom('api_import')
    .selectAll()
    .where('id', '=', data.importId)
    .executeTakeFirst();
  if (!row) {
    await updateProgress(db, data.trackingId, { status: 'FAILED', message: 'This import was deleted.' });
    return null;
  }
  const counts: ApiImportCounts = { fetched: 0, created: 0, updated: 0, unchanged: 0, failed: 0, skipped: 0 };
  const failures: string[] = [];
  const finish = async (status: 'succeeded' | 'failed', error: string | null) => {
    await db
      .updateTable('api_import')
      .set({
        last_run_status: status,
        last_run_finished_at: new Date(),
        last_run_counts: JSON.stringify(counts),
        last_run_error: error,
        updated_at: new Date(),
      })
      .where('id', '=', row.id)
      .execute();
  };
  await db
    .updateTable('api_import')
    .set({ last_run_status: 'running', last_run_at: new Date(), last_tracking_id: data.trackingId })
    .where('id', '=', row.id)
    .execute();
  if (!(await updateProgress(db, data.trackingId, { status: 'IN_PROGRESS', message: 'Reading the API' }))) {
    await finish('failed', 'Cancelled.');
    return null;
  }
  try {
    const config = openConfig(deps.secretBox, row);
    let cancelled = false;
    const fetched = await fetchRecords(
      config,
      { maxPages: row.max_pages, maxRecords: row.max_records },
      {
        allowPrivate: allowPrivateHosts(deps.config),
        onPage: async (pages, records) => {
          const going = await updateProgress(db, data.trackingId, {
            message: `Reading the API: page ${pages}, ${records} records`,
          });
          if (!going) cancelled = true;
          return going;
        },
      },
    );
    if (cancelled) {
      await finish('failed', 'Cancelled.');
      return null;
    }
    counts.fetched = fetched.records.length;

    const connection = await db
      .selectFrom('external_connection')
      .selectAll()
      .where('id', '=', row.external_connection_id)
      .where('owner_id', '=', row.owner_id)
      .executeTakeFirst();
    if (!connection)
      throw new HttpError(404, 'connection gone', "The import's connection was deleted.", 'not_found');
    if (connection.status === 'broken')
      throw new HttpError(
        409,
        'connection broken',
        "The import's connection is broken. Reconnect the app.",
        'conflict',
      );
    const table = await targetTable(deps, connection, row.base_remote_id, row.table_remote_id);
    const byId = new Map(table.fields.map((f) => [f.remoteId, f]));
    const spec = (f: TargetField): FieldSpec => ({ id: f.remoteId, name: f.name, type: asFieldType(f.type) });
    const matchField = byId.get(row.match_target_field_id);
    if (!matchField)
      throw new HttpError(
        409,
        'match field gone',
        `The field the import matches records on (${row.match_target_field_id}) is no longer in the table.`,
        'conflict',
      );
    const sourceTypes = new Map(config.fields.map((f) => [f.name, f.type as FieldType]));
    const mapping = row.mapping.flatMap((m) => {
      const target = byId.get(m.targetFieldId);
      return target && !target.readOnly ? [{ ...m, target }] : [];
    });
    const idMapping = mapping.find((m) => m.target.remoteId === matchField.remoteId);
    if (!idMapping)
      throw new HttpError(409, 'id not mapped', 'The id field is not mapped to the match field.', 'conflict');

    // The source records as the target's values, keyed by their id (a later duplicate wins).
    const wanted = new Map<string, Record<string, CanonicalValue>>();
    for (const record of fetched.records) {
      const fields: Record<string, CanonicalValue> = {};
      let problem: string | null = null;
      for (const m of mapping) {
        const raw = record[m.sourceField];
        let type: FieldType = sourceTypes.get(m.sourceField) ?? 'text';
        let value = normalizeValue(type, raw);
        // A value the sample's type did not foresee (text in a number field ...) goes as json or text.
        if (!value.ok) {
          type = raw !== null && typeof raw === 'object' ? 'json' : 'text';
          value = normalizeValue(type, type === 'text' ? String(raw) : raw);
        }
        const from: FieldSpec = { id: m.sourceField, name: m.sourceField, type };
        const converted = value.ok ? convertValue(value.value, from, spec(m.target)) : value;
        if (!converted.ok) {
          problem = `${m.sourceField} → ${m.target.name}: ${converted.problem.message}`;
          break;
        }
        fields[m.target.remoteId] = converted.value;
      }
      const key = matchKey(fields[matchField.remoteId] ?? null);
      if (problem) {
        counts.failed++;
        if (failures.length < MAX_FAILURES_SHOWN)
          failures.push(`Record ${idKey(record[idMapping.sourceField]) ?? '(no id)'}: ${problem}`);
        continue;
      }
      if (key === null) {
        counts.skipped++;
        continue;
      }
      wanted.set(key, fields);
    }

    await updateProgress(db, data.trackingId, {
      message: `Reading ${table.name}`,
      total: wanted.size,
      done: 0,
    });
    const items = deps.secretBox.open<SealedSecrets>(connection.secrets).connectionItems;
    const connector = deps.runtimeConnectors.forConnection(
      connection.type,
      items,
      connectionItemsSaver(deps, connection.id),
    );
    if (!connector)
      throw new HttpError(
        400,
        'no connector',
        `Writing to ${connection.type} is not available on this server.`,
        'validation',
      );
    const existing = await readIndex(connector, table.remoteId, matchField);

    const requests: WriteRequest[] = [];
    const runKey = data.trackingId;
    for (const [key, fields] of wanted) {
      const found = existing.get(key);
      if (!found) {
        requests.push({ kind: 'create', fields, idempotencyKey: `api-import:${runKey}:${key}` });
        continue;
      }
      const changed: Record<string, CanonicalValue> = {};
      for (const [fieldId, value] of Object.entries(fields)) {
        const target = byId.get(fieldId) as TargetField;
        const current = normalizeValue(asFieldType(target.type), found.fields[fieldId] ?? null);
        if (!current.ok || !valuesEqual(current.value, value)) changed[fieldId] = value;
      }
      if (Object.keys(changed).length === 0) counts.unchanged++;
      else
        requests.push({
          kind: 'update',
          remoteId: found.id,
          fields: changed,
          idempotencyKey: `api-import:${runKey}:${key}`,
        });
    }

    const batch = Math.max(1, Math.min(connector.capabilities.batchSize, 500));
    for (let i = 0; i < requests.length; i += batch) {
      const slice = requests.slice(i, i + batch);
      const results = await connector.write(table.remoteId, slice);
      results.forEach((r, j) => {
        const req = slice[j] as WriteRequest;
        if (r.ok) {
          if (req.kind === 'create') counts.created++;
          else counts.updated++;
        } else {
          counts.failed++;
          if (failures.length < MAX_FAILURES_SHOWN) failures.push(r.error.userFacingMessage);
        }
      });
      const going = await updateProgress(db, data.trackingId, {
        done: counts.unchanged + counts.created + counts.updated + counts.failed,
        message: `Writing to ${table.name}: ${counts.created} created, ${counts.updated} updated`,
      });
      if (!going) {
        await finish('failed', 'Cancelled.');
        return counts;
      }
    }

    const everythingFailed = counts.failed > 0 && counts.created + counts.updated + counts.unchanged === 0;
    const error =
      counts.failed > 0
        ? `${counts.failed} record${counts.failed === 1 ? '' : 's'} failed. ${failures.join(' ')}`
        : null;
    await finish(everythingFailed ? 'failed' : 'succeeded', error);
    const summary = `${counts.fetched} records read (${fetched.pagesRead} page${fetched.pagesRead === 1 ? '' : 's'}): ${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged${counts.failed ? `, ${counts.failed} failed` : ''}${counts.skipped ? `, ${counts.skipped} without an id skipped` : ''}`;
    await updateProgress(db, data.trackingId, {
      status: everythingFailed ? 'FAILED' : 'COMPLETED',
      done: wanted.size,
      message: summary,
      result: { counts, pagesRead: fetched.pagesRead, stoppedBecause: fetched.stoppedBecause, failures },
    });
    return counts;
  } catch (error) {
    const message = describeFailure(error);
    await finish('failed', message);
    await updateProgress(db, data.trackingId, {
      status: 'FAILED',
      message: `The import stopped: ${message}`,
      result: { counts },
    });
    return counts;
  }
}

/** Every record of the target table, by its match field's value (the first of duplicates wins). */
async function readIndex(connector: TableConnector, table: string, matchField: TargetField) {
  const index = new Map<string, { id: string; fields: Record<string, CanonicalValue> }>();
  let cursor: string | null = null;
  for (;;) {
    const page = await connector.read(table, cursor, { pageSize: READ_PAGE });
    for (const record of page.records) {
      const value = normalizeValue(asFieldType(matchField.type), record.fields[matchField.remoteId] ?? null);
      const key = value.ok ? matchKey(value.value) : null;
      if (key !== null && !index.has(key)) index.set(key, record);
    }
    if (!page.hasMore) return index;
    cursor = page.nextCursor;
  }
}
