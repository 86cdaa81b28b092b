import {
  type ApiAuth,
  type ApiFetchConfig,
  type ApiImport,
  type ApiImportCounts,
  MASKED_SECRET,
} from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database';
import type { ApiImportTable } from '../../db/schema';
import { canAccessOwner, type Principal } from '../../http/context';
import { notFound } from '../../http/http-error';
import type { SecretBox } from '../secret-box';

type Row = Selectable<ApiImportTable>;
export type SealedApiSecrets = { auth: ApiAuth; headers: Record<string, string> };

/** Header names whose values are credentials: sealed at rest and masked in answers. */
const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie)$|token|secret|key|auth|passw|session|signature|credential/i;
export const isSecretHeader = (name: string) => SECRET_HEADER.test(name);

/** The configuration to store in the clear (secrets masked) and the secrets to seal. */
export function splitSecrets(config: ApiFetchConfig): { visible: ApiFetchConfig; secrets: SealedApiSecrets } {
  const headers: Record<string, string> = {};
  const secretHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers)) {
    if (isSecretHeader(name)) {
      headers[name] = MASKED_SECRET;
      secretHeaders[name] = value;
    } else headers[name] = value;
  }
  return {
    visible: { ...config, headers, auth: maskAuth(config.auth) },
    secrets: { auth: config.auth, headers: secretHeaders },
  };
}

export function maskAuth(auth: ApiAuth): ApiAuth {
  if (auth.type === 'bearer') return { type: 'bearer', token: MASKED_SECRET };
  if (auth.type === 'basic') return { type: 'basic', username: auth.username, password: MASKED_SECRET };
  if (auth.type === 'api_key') return { type: 'api_key', header: auth.header, value: MASKED_SECRET };
  return auth;
}

/** The configuration with its sealed secrets back in, to call the API with. */
export function openConfig(secretBox: SecretBox, row: Pick<Row, 'config' | 'secrets'>): ApiFetchConfig {
  const visible = row.config as ApiFetchConfig;
  const secrets = secretBox.open<SealedApiSecrets>(row.secrets);
  return { ...visible, headers: { ...visible.headers, ...secrets.headers }, auth: secrets.auth };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const HOUR = 60 * 60 * 1000;
export const SCHEDULE_INTERVAL_MS = { hourly: HOUR, daily: 24 * HOUR } as const;

export function nextRunAt(row: Pick<Row, 'schedule' | 'last_run_at'>): string | null {
  if (row.schedule === 'none') return null;
  const last = row.last_run_at ? new Date(row.last_run_at).getTime() : Date.now();
  return new Date(last + SCHEDULE_INTERVAL_MS[row.schedule]).toISOString();
}

export function toApiImport(row: Row, connection: { name: string; type: string } | null): ApiImport {
  return {
    id: row.id,
    name: row.name,
    config: row.config as ApiFetchConfig,
    target: {
      connectionId: row.external_connection_id,
      connectionName: connection?.name ?? null,
      connectionType: connection?.type ?? null,
      baseRemoteId: row.base_remote_id,
      tableRemoteId: row.table_remote_id,
    },
    mapping: row.mapping,
    matchTargetFieldId: row.match_target_field_id,
    schedule: row.schedule,
    maxPages: row.max_pages,
    maxRecords: row.max_records,
    lastRunStatus: row.last_run_status,
    lastRunAt: iso(row.last_run_at),
    lastRunFinishedAt: iso(row.last_run_finished_at),
    lastRunCounts: (row.last_run_counts as ApiImportCounts | null) ?? null,
    lastRunError: row.last_run_error,
    lastTrackingId: row.last_tracking_id,
    nextRunAt: nextRunAt(row),
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
  };
}

/** An import the principal may act on (staff: any), with its connection's name and type. */
export async function findApiImport(db: Db, principal: Principal, id: string) {
  const row = await db.selectFrom('api_import').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || !canAccessOwner(principal, row.owner_id)) throw notFound('API import');
  return row;
}

export async function describeApiImport(db: Db, row: Row): Promise<ApiImport> {
  const connection = await db
    .selectFrom('external_connection')
    .select(['name', 'type'])
    .where('id', '=', row.external_connection_id)
    .executeTakeFirst();
  return toApiImport(row, connection ?? null);
}
