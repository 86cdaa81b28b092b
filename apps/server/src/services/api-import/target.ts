import type { ApiField, ApiFieldMapping, ConnectorType } from '@lockstep/contract';
import { type AutomapColumn, automapFields, nameKey } from '@lockstep/engine';
import type { Selectable } from 'kysely';
import type { DiscoveredTable } from '../../connectors/connector-port';
import type { ExternalConnectionTable } from '../../db/schema';
import type { AppContext } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { callConnector, connectorFor, openSecrets, portContext } from '../external-connections';

type ConnectionRow = Selectable<ExternalConnectionTable>;
export type TargetField = {
  remoteId: string;
  name: string;
  type: string;
  readOnly: boolean;
  primaryKey: boolean;
};
export type TargetTable = { remoteId: string; name: string; fields: TargetField[] };

function toTarget(t: DiscoveredTable): TargetTable {
  const pk = Array.isArray(t.extras.primaryKey) ? (t.extras.primaryKey as string[]) : [];
  return {
    remoteId: t.remoteId,
    name: t.name,
    fields: t.fields.map((f) => ({
      remoteId: f.remoteId,
      name: f.name,
      type: f.fieldType,
      readOnly: f.readOnly,
      primaryKey: pk.includes(f.remoteId),
    })),
  };
}

/** The tables of a connection's base with their fields, as its connector discovers them. */
export async function targetTables(
  ctx: Pick<AppContext, 'connectors' | 'secretBox' | 'db'>,
  connection: ConnectionRow,
  baseRemoteId: string,
): Promise<TargetTable[]> {
  const type = connection.type as ConnectorType;
  const port = connectorFor(ctx as AppContext, type);
  const tables = await callConnector(type, () =>
    port.discoverSchema(
      openSecrets(ctx as AppContext, connection).connectionItems,
      baseRemoteId,
      portContext(ctx as AppContext, connection),
    ),
  );
  return tables.map(toTarget);
}

export async function targetTable(
  ctx: Pick<AppContext, 'connectors' | 'secretBox' | 'db'>,
  connection: ConnectionRow,
  baseRemoteId: string,
  tableRemoteId: string,
): Promise<TargetTable> {
  const table = (await targetTables(ctx, connection, baseRemoteId)).find((t) => t.remoteId === tableRemoteId);
  if (!table)
    throw new HttpError(
      404,
      `table ${tableRemoteId} not in ${baseRemoteId}`,
      `The table "${tableRemoteId}" was not found in this connection's "${baseRemoteId}".`,
      'not_found',
    );
  return table;
}

const ID_TARGET_NAMES = ['externalid', 'sourceid', 'apiid', 'remoteid', 'importid'];

export type MappingProposal = {
  mapping: (ApiFieldMapping & { score: number; explanation: string })[];
  unmatchedSource: string[];
  matchTargetFieldId: string | null;
};

/**
 * Automap's proposal from the API's fields to a target table's writable fields, and the target
 * field for the id field (a same-named or external-id field; automap leaves ids of one app out).
 */
export function proposeMapping(
  fields: ApiField[],
  idField: string | null,
  table: TargetTable,
  sampleRecords: Record<string, unknown>[] = [],
): MappingProposal {
  const writable = table.fields.filter((f) => !f.readOnly);
  const left: AutomapColumn[] = fields.map((f) => ({ id: f.name, name: f.name, type: f.type }));
  const right: AutomapColumn[] = writable.map((f) => ({
    id: f.remoteId,
    name: f.name,
    type: f.type,
    primaryKey: f.primaryKey,
  }));
  const samples = Object.fromEntries(fields.map((f) => [f.name, sampleRecords.map((r) => r[f.name])]));
  const result = automapFields(left, right, sampleRecords.length ? { left: samples } : {});
  const mapping = result.proposals.map((p) => ({
    sourceField: p.leftColumnId,
    targetFieldId: p.rightColumnId,
    score: p.score,
    explanation: p.explanation,
  }));
  let matchTargetFieldId: string | null = null;
  if (idField) {
    const paired = mapping.find((m) => m.sourceField === idField);
    if (paired) matchTargetFieldId = paired.targetFieldId;
    else {
      const taken = new Set(mapping.map((m) => m.targetFieldId));
      const free = writable.filter((f) => !taken.has(f.remoteId));
      const key = nameKey(idField);
      const found =
        free.find((f) => !f.primaryKey && ID_TARGET_NAMES.includes(nameKey(f.name))) ??
        free.find((f) => !f.primaryKey && nameKey(f.name) === key) ??
        free.find((f) => nameKey(f.name) === key);
      if (found) {
        matchTargetFieldId = found.remoteId;
        mapping.push({
          sourceField: idField,
          targetFieldId: found.remoteId,
          score: 1,
          explanation: `${idField} → ${found.name}: the record's id, to match existing records on`,
        });
      }
    }
  }
  const used = new Set(mapping.map((m) => m.sourceField));
  return {
    mapping,
    unmatchedSource: fields.map((f) => f.name).filter((n) => !used.has(n)),
    matchTargetFieldId,
  };
}
