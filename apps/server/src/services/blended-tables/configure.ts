import { ConnectorError, type TableConnector } from '@lockstep/connectors';
import {
  BLENDED_SOURCE_FIELD_ID,
  type BlendedField,
  type BlendedFieldInput,
  type BlendedSource,
  type BlendedSourceInput,
  type ConnectorType,
} from '@lockstep/contract';
import { type AutomapColumn, automapFields, FIELD_TYPES, type SampleValues } from '@lockstep/engine';
import type { DiscoveredField, DiscoveredTable } from '../../connectors/connector-port';
import type { AppContext, Principal } from '../../http/context';
import { HttpError, notFound } from '../../http/http-error';
import { callConnector, connectorFor, openSecrets, portContext } from '../external-connections';
import { toBlended } from './blend';
import { openSourceConnector } from './store';

/** Field types a blended table does not carry: relations inside the sources are out of scope. */
const SKIPPED_TYPES = new Set(['relations']);
const BLENDABLE = new Set<string>(FIELD_TYPES.filter((t) => !SKIPPED_TYPES.has(t)));

export type OpenedSource = {
  input: BlendedSourceInput;
  connectionName: string;
  table: DiscoveredTable;
  /** The fields a blended table can take from it (no record ids, no relations). */
  fields: DiscoveredField[];
  connector: () => Promise<TableConnector>;
};

const bad = (message: string) => new HttpError(400, message, message, 'validation');

/** Turns a source connector's refusal into the error envelope (a 4xx, not a 500). */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ConnectorError) {
      const status = error.code === 'not_found' ? 404 : error.code === 'rate_limited' ? 429 : 400;
      throw new HttpError(status, error.message, error.userFacingMessage, error.code);
    }
    throw error;
  }
}

/** A source table of the signed-in user's own connection, with its schema (404 for anyone else's). */
export async function openSource(
  ctx: AppContext,
  principal: Principal,
  input: BlendedSourceInput,
): Promise<OpenedSource> {
  const conn = await ctx.db
    .selectFrom('external_connection')
    .selectAll()
    .where('id', '=', input.connectionId)
    .executeTakeFirst();
  // Only the user's own connections: a blended table reads and writes them with the user's rights.
  if (!conn || conn.owner_id !== principal.userId) throw notFound('Connection');
  if (conn.type === 'blended') throw bad('A blended table cannot be a source of another blended table.');
  const type = conn.type as ConnectorType;
  const port = connectorFor(ctx, type);
  const tables = await callConnector(type, () =>
    port.discoverSchema(openSecrets(ctx, conn).connectionItems, input.baseRemoteId, portContext(ctx, conn)),
  );
  const table = tables.find((t) => t.remoteId === input.tableRemoteId);
  if (!table)
    throw new HttpError(
      404,
      `Source table ${input.tableRemoteId} not found in ${input.baseRemoteId}`,
      `The table ${input.tableRemoteId} was not found in ${conn.name}.`,
      'not_found',
    );
  const keys = Array.isArray(table.extras.primaryKey) ? table.extras.primaryKey.map(String) : [];
  const fields = table.fields.filter(
    (f) => !SKIPPED_TYPES.has(f.fieldType) && !keys.includes(f.remoteId) && f.options.primaryKey !== true,
  );
  return {
    input,
    connectionName: conn.name,
    table,
    fields,
    connector: () =>
      guarded(() =>
        openSourceConnector(
          { db: ctx.db, secretBox: ctx.secretBox, connectors: ctx.runtimeConnectors },
          principal.userId,
          conn.id,
        ),
      ),
  };
}

/** Names for the sources' records (what `Source` says): table names, told apart when they repeat. */
export function sourceNames(sources: { table: string; connection: string }[]): string[] {
  const count = (names: string[], n: string) => names.filter((x) => x === n).length;
  const first = sources.map((s) => s.table);
  const second = sources.map((s) => (count(first, s.table) > 1 ? `${s.table} (${s.connection})` : s.table));
  return second.map((n, i) => (count(second, n) > 1 ? `${n} #${i + 1}` : n));
}

/** The first rows of a source, as sample values by field id (for aligning fields by their values). */
async function samplesOf(source: OpenedSource, pageSize = 25): Promise<SampleValues> {
  try {
    const page = await (await source.connector()).read(source.table.remoteId, null, { pageSize });
    const out: Record<string, unknown[]> = {};
    for (const r of page.records.slice(0, pageSize))
      for (const [k, v] of Object.entries(r.fields)) {
        const list = out[k] ?? [];
        list.push(v);
        out[k] = list;
      }
    return out;
  } catch {
    // Samples only sharpen the proposal: names and types still align the fields.
    return {};
  }
}

const column = (f: DiscoveredField): AutomapColumn => ({
  id: f.remoteId,
  name: f.name,
  type: f.fieldType,
  readOnly: f.readOnly,
  options: f.options,
});

export type ProposedField = BlendedFieldInput & { reasons: string[] };

/**
 * The proposed field list: the first source's fields, then each other source's fields paired with
 * them by automap (names, synonyms, types, sample values); a field no earlier one matches becomes
 * a field of its own. Record ids and relations are left out.
 */
export function proposeFields(
  fieldsBySource: DiscoveredField[][],
  samplesBySource: SampleValues[],
): ProposedField[] {
  const n = fieldsBySource.length;
  const proposed: ProposedField[] = [];
  const firstSamples: SampleValues = {};
  const add = (index: number, f: DiscoveredField, reason: string) => {
    const sourceFields: (string | null)[] = Array.from({ length: n }, () => null);
    sourceFields[index] = f.remoteId;
    proposed.push({
      name: f.name,
      // A type a blended table does not carry (relations, an app's own) is passed through as json.
      type: (BLENDABLE.has(f.fieldType) ? f.fieldType : 'json') as ProposedField['type'],
      sourceFields,
      options: f.options,
      readOnly: f.readOnly,
      reasons: [reason],
    });
    firstSamples[String(proposed.length - 1)] = samplesBySource[index]?.[f.remoteId] ?? [];
  };
  for (const f of fieldsBySource[0] ?? []) add(0, f, `${f.name} from source 1`);
  for (let j = 1; j < n; j++) {
    const fields = fieldsBySource[j] ?? [];
    const blended: AutomapColumn[] = proposed.map((p, k) => ({
      id: String(k),
      name: p.name,
      type: p.type,
      options: p.options,
    }));
    const auto = automapFields(blended, fields.map(column), {
      left: firstSamples,
      right: samplesBySource[j] ?? {},
    });
    const paired = new Set<string>();
    for (const p of auto.proposals) {
      const target = proposed[Number(p.leftColumnId)];
      const f = fields.find((x) => x.remoteId === p.rightColumnId);
      if (!target || !f || target.sourceFields[j] !== null) continue;
      target.sourceFields[j] = f.remoteId;
      // Read-only only when every source's field is (a writable one is written where it exists).
      target.readOnly = target.readOnly && f.readOnly;
      target.reasons.push(`${f.name} from source ${j + 1}: ${p.explanation}`);
      paired.add(f.remoteId);
    }
    for (const f of fields)
      if (!paired.has(f.remoteId)) add(j, f, `${f.name} from source ${j + 1} (no match)`);
  }
  return proposed;
}

export async function generateConfig(ctx: AppContext, principal: Principal, inputs: BlendedSourceInput[]) {
  const sources: OpenedSource[] = [];
  for (const input of inputs) sources.push(await openSource(ctx, principal, input));
  const samples: SampleValues[] = [];
  for (const s of sources) samples.push(await samplesOf(s));
  const names = sourceNames(sources.map((s) => ({ table: s.table.name, connection: s.connectionName })));
  const fields = proposeFields(
    sources.map((s) => s.fields),
    samples,
  ).map((f) => (f.name.toLowerCase() === 'source' ? { ...f, name: `${f.name} (field)` } : f));
  return {
    name: `${sources[0]?.table.name ?? 'Blended'} (blended)`,
    sources: sources.map((s, i) => ({ ...s.input, name: names[i] as string })),
    defaultSource: 0,
    fields,
    sourceFields: sources.map((s) =>
      s.fields.map((f) => ({ remoteId: f.remoteId, name: f.name, type: f.fieldType })),
    ),
  };
}

/** Checks a field list against its sources: every source field exists, names are unique. */
export function checkConfig(
  sources: (BlendedSource & { fields?: DiscoveredField[] })[],
  fields: BlendedFieldInput[],
  defaultSource = 0,
): BlendedField[] {
  if (defaultSource >= sources.length)
    throw bad(`The default source must be one of the ${sources.length} sources.`);
  const names = sources.map((s) => s.name);
  if (new Set(names).size !== names.length) throw bad('Each source needs a name of its own.');
  const seen = new Set<string>();
  for (const s of sources) {
    const key = `${s.connectionId}|${s.baseRemoteId}|${s.tableRemoteId}`;
    if (seen.has(key)) throw bad('The same table is chosen twice as a source.');
    seen.add(key);
  }
  const fieldNames = new Set<string>(['source']);
  return fields.map((f, k) => {
    if (f.sourceFields.length !== sources.length)
      throw bad(
        `Field ${f.name} must say, for each of the ${sources.length} sources, which field it comes from.`,
      );
    if (f.sourceFields.every((x) => x === null)) throw bad(`Field ${f.name} comes from no source.`);
    const key = f.name.toLowerCase();
    if (fieldNames.has(key))
      throw bad(
        key === 'source'
          ? 'Source is the field saying where a record comes from: rename this field.'
          : `Two fields are named ${f.name}.`,
      );
    fieldNames.add(key);
    f.sourceFields.forEach((remoteId, i) => {
      const known = sources[i]?.fields;
      if (remoteId !== null && known && !known.some((x) => x.remoteId === remoteId))
        throw bad(`Field ${f.name}: ${sources[i]?.name} has no field ${remoteId}.`);
    });
    return { ...f, id: `f${k + 1}` };
  });
}

/** Opens every source and checks the field list against their schemas. */
export async function resolveConfig(
  ctx: AppContext,
  principal: Principal,
  sources: BlendedSource[],
  fields: BlendedFieldInput[],
  defaultSource = 0,
) {
  const opened: OpenedSource[] = [];
  for (const s of sources) opened.push(await openSource(ctx, principal, s));
  const checked = checkConfig(
    sources.map((s, i) => ({ ...s, fields: opened[i]?.fields })),
    fields,
    defaultSource,
  );
  return { opened, fields: checked };
}

/** The first rows of each source in blended form, with their origin. */
export async function previewRows(
  opened: OpenedSource[],
  config: { sources: BlendedSource[]; fields: BlendedField[] },
  perSource: number,
) {
  const rows: { id: string; source: string; sourceIndex: number; fields: Record<string, unknown> }[] = [];
  for (const [i, s] of opened.entries()) {
    const page = await guarded(async () =>
      (await s.connector()).read(s.table.remoteId, null, { pageSize: perSource }),
    );
    for (const r of page.records.slice(0, perSource)) {
      const b = toBlended(config, i, r);
      rows.push({
        id: b.id,
        source: config.sources[i]?.name ?? '',
        sourceIndex: i,
        fields: b.fields,
      });
    }
  }
  return {
    fields: [
      ...config.fields.map((f) => ({ id: f.id, name: f.name, type: f.type })),
      { id: BLENDED_SOURCE_FIELD_ID, name: 'Source', type: 'single_select' },
    ],
    rows,
  };
}
