import type { SyncError, SyncErrorFilters } from '@lockstep/contract';
import { type Selectable, sql } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../db/database';
import type { SyncErrorTable } from '../db/schema';
import { canAccessOwner, type Principal } from '../http/context';
import { notFound } from '../http/http-error';
import { findCoreBase } from './core-bases';
import { iso } from './sync-logs';

export function toSyncError(row: Selectable<SyncErrorTable>): SyncError {
  return {
    id: row.id,
    coreBaseId: row.core_base_id,
    coreMetaRecordId: row.core_meta_record_id,
    externalConnectionId: row.external_connection_id,
    side: row.side,
    remoteId: row.remote_id,
    recordName: typeof row.details?.recordName === 'string' ? row.details.recordName : null,
    code: row.code,
    message: row.message,
    userFacingMessage: row.user_facing_message,
    details: row.details,
    status: row.status,
    attempts: row.attempts,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/**
 * The issues a principal may see, narrowed by the list filters: one sync (checked as theirs) or all
 * of theirs; status, code, side, exact message (a cause), table pair, and words in the message or
 * the record id.
 */
export async function filteredSyncErrors(
  ctx: { db: Db },
  principal: Principal,
  filters: z.infer<typeof SyncErrorFilters>,
) {
  let q = ctx.db.selectFrom('sync_error');
  if (filters.coreBaseId) {
    await findCoreBase(ctx.db, principal, filters.coreBaseId);
    q = q.where('core_base_id', '=', filters.coreBaseId);
  } else {
    q = q.where('owner_id', '=', principal.userId);
  }
  if (filters.status) q = q.where('status', '=', filters.status);
  if (filters.code) q = q.where('code', '=', filters.code);
  if (filters.side) q = q.where('side', '=', filters.side);
  if (filters.message !== undefined) q = q.where('user_facing_message', '=', filters.message);
  if (filters.tableMappingId)
    q = q.where(sql<string>`details->>'tableMappingId'`, '=', filters.tableMappingId);
  if (filters.search) {
    const like = `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) =>
      eb.or([
        eb('user_facing_message', 'ilike', like),
        eb('message', 'ilike', like),
        eb('remote_id', 'ilike', like),
      ]),
    );
  }
  return q;
}

export async function findSyncError(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('sync_error').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('Issue');
  return row;
}

type Fix = { title: string; steps: string[] };

/** Rule-based suggestions from the error code: what a user can do about each kind of failure. */
const FIXES: Record<string, Fix> = {
  auth_invalid: {
    title: 'Reconnect the app',
    steps: [
      'The app no longer accepts the saved credentials (a revoked token, a changed password or an expired grant).',
      "Open the sync's settings and reconnect this app with an account that can read and write the table.",
      'The sync resumes by itself once the connection works; then retry this issue.',
    ],
  },
  permission_denied: {
    title: 'Give Lockstep access to this table',
    steps: [
      'The connected account can see the base but may not change this table or record.',
      'Ask the app owner for edit rights, or reconnect with an account that has them.',
      'Retry this issue.',
    ],
  },
  rate_limited: {
    title: 'Wait: the app is rate limiting',
    steps: [
      'The app asked Lockstep to slow down. Lockstep retries with backoff, so most of these clear by themselves.',
      'If it keeps happening, other tools may be using the same account’s quota: reduce them or lower the sync frequency.',
    ],
  },
  not_found: {
    title: 'The record or table is gone',
    steps: [
      'The record, table or field no longer exists in the app (deleted or moved).',
      'If a table or field was deleted, update the mapping; if a record was deleted, retry to let the sync recreate or unlink it.',
    ],
  },
  validation: {
    title: 'Change the value the app refuses',
    steps: [
      'The app refused a value (too long, not an allowed option, the wrong format, or a required field left empty).',
      'Edit the record on the other side so its value fits this field, or change the field mapping.',
      'Retry this issue.',
    ],
  },
  version_conflict: {
    title: 'Retry: the record changed during the write',
    steps: [
      'The record changed in the app while Lockstep was writing it. Retry; Lockstep re-reads it first.',
    ],
  },
  cursor_invalid: {
    title: 'A full rescan is running',
    steps: [
      'The app no longer recognised where Lockstep left off, so the next run reads the whole table again. No action needed.',
    ],
  },
  transient: {
    title: 'Retry: the app was unavailable',
    steps: ['The app had a temporary failure (a timeout or a server error). Retry; it usually succeeds.'],
  },
  type_mismatch: {
    title: 'Fix the field mapping',
    steps: [
      "A value could not be converted to the other field's type.",
      'Map the field to one of a compatible type, or correct the value in the source record, then retry.',
    ],
  },
  required_missing: {
    title: 'Fill in the required field',
    steps: [
      'The other app requires a value in this field, and the record has none, so it was not written there.',
      'Fill in the field in the source record (or map a field that always has a value); the next run writes it.',
    ],
  },
  relation_pending: {
    title: 'Sync the linked record first',
    steps: [
      'This record links to a record that does not exist on the other side yet.',
      'Make sure the linked table is mapped too; the link is written once its record exists.',
    ],
  },
  mass_delete: {
    title: 'Review the deletions',
    steps: [
      'A run would have deleted more records than the safety threshold, so it stopped before deleting anything.',
      "Check the delete approval queue on the sync's overview: approve the deletions if they are intended, or reject them.",
    ],
  },
};

const DEFAULT_FIX: Fix = {
  title: 'Retry, then contact support',
  steps: ['Retry this issue. If it fails again, contact support with the issue id.'],
};

export function suggestFixByRules(code: string): Fix {
  return FIXES[code] ?? DEFAULT_FIX;
}
