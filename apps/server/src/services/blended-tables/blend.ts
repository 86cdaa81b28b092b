import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteOptions,
  type WriteRequest,
  type WriteResult,
} from '@lockstep/connectors';
import {
  BLENDED_SOURCE_FIELD_ID,
  type BlendedField,
  type BlendedSource,
  type BlendedTableConfig,
} from '@lockstep/contract';
import type { CanonicalValue, RecordData } from '@lockstep/engine';

/**
 * The blended connector's pure parts: the composite cursor over the sources, record ids prefixed
 * with their source's position, fields renamed between the blended table and each source.
 * Relations inside the sources are out of scope: their fields are not blended.
 */

/** Where a blended read stands: the source being read and every source's own cursor. */
export type CompositeCursor = {
  /** The source read next. */
  i: number;
  /** Each source's cursor (null: its scan has not started). */
  c: (string | null)[];
};

export function parseCursor(cursor: string | null, sources: number): CompositeCursor {
  if (cursor === null) return { i: 0, c: Array.from({ length: sources }, () => null) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    throw new ConnectorError(
      'cursor_invalid',
      'Blended cursor is not JSON',
      'The blended table starts a new scan.',
    );
  }
  const p = parsed as Partial<CompositeCursor>;
  if (
    typeof p !== 'object' ||
    p === null ||
    !Array.isArray(p.c) ||
    p.c.length !== sources ||
    typeof p.i !== 'number' ||
    p.i < 0 ||
    p.i >= sources ||
    !p.c.every((x) => x === null || typeof x === 'string')
  )
    // The sources changed since this cursor was made: a new full scan.
    throw new ConnectorError(
      'cursor_invalid',
      'Blended cursor does not fit the sources',
      'The blended table starts a new scan.',
    );
  return { i: p.i, c: p.c };
}

export const blendedId = (sourceIndex: number, id: string) => `${sourceIndex}:${id}`;

/** A blended record id's source position and the source's own id (null: not one of this table's). */
export function splitBlendedId(id: string, sources: number): { index: number; id: string } | null {
  const at = id.indexOf(':');
  if (at <= 0) return null;
  const head = id.slice(0, at);
  if (!/^\d+$/.test(head)) return null;
  const index = Number(head);
  if (index >= sources) return null;
  return { index, id: id.slice(at + 1) };
}

/** A source's record in blended form: fields renamed, only fields the source maps, plus Source. */
export function toBlended(
  config: Pick<BlendedTableConfig, 'sources' | 'fields'>,
  index: number,
  r: RecordData,
): RecordData {
  const fields: Record<string, CanonicalValue> = {};
  for (const f of config.fields) {
    const from = f.sourceFields[index];
    if (from && Object.hasOwn(r.fields, from)) fields[f.id] = r.fields[from] as CanonicalValue;
  }
  fields[BLENDED_SOURCE_FIELD_ID] = (config.sources[index] as BlendedSource).name;
  return { id: blendedId(index, r.id), fields };
}

/** Blended fields in a source's terms: fields it does not map, read-only ones and Source are left out. */
export function toSource(
  fields: BlendedField[],
  index: number,
  values: Record<string, CanonicalValue>,
): Record<string, CanonicalValue> {
  const out: Record<string, CanonicalValue> = {};
  for (const f of fields) {
    const to = f.sourceFields[index];
    if (!to || f.readOnly || !Object.hasOwn(values, f.id)) continue;
    out[to] = values[f.id] as CanonicalValue;
  }
  return out;
}

/** The weakest of the sources' capabilities: a blended table can do only what all its sources can. */
export function weakestCapabilities(all: Capabilities[]): Capabilities {
  const order = { none: 0, full_scan: 1, events: 2 } as const;
  return {
    batchSize: Math.max(1, Math.min(...all.map((c) => c.batchSize))),
    incrementalRead: all.every((c) => c.incrementalRead),
    deleteDetection: all.reduce<Capabilities['deleteDetection']>(
      (w, c) => (order[c.deleteDetection] < order[w] ? c.deleteDetection : w),
      'events',
    ),
    webhooks: false,
  };
}

/**
 * One page of the blended table. Sources are read in turn, from the composite cursor's current one;
 * a source that ends its pass hands over to the next within the same call while the page has room.
 * `scanComplete` only when this one page holds every source's whole table (each source's page was
 * scanComplete, all read in this call from the start of a full scan): absence in it is then evidence.
 */
export async function readBlended(
  config: Pick<BlendedTableConfig, 'sources' | 'fields'>,
  connectorOf: (index: number) => Promise<TableConnector>,
  cursor: string | null,
  pageSize: number,
): Promise<ReadPage> {
  const n = config.sources.length;
  const at = parseCursor(cursor, n);
  const fullFromStart = cursor === null;
  const records: RecordData[] = [];
  const deletedIds: string[] = [];
  let allComplete = fullFromStart;
  let waiting = false;
  let largestDeleteBatch: number | undefined;
  let i = at.i;
  const c = [...at.c];
  while (i < n) {
    const source = config.sources[i] as BlendedSource;
    const page = await (await connectorOf(i)).read(source.tableRemoteId, c[i] ?? null, { pageSize });
    for (const r of page.records) records.push(toBlended(config, i, r));
    for (const d of page.deletedIds) deletedIds.push(blendedId(i, d));
    if (page.waiting) waiting = true;
    if (page.largestDeleteBatch !== undefined)
      largestDeleteBatch = Math.max(largestDeleteBatch ?? 0, page.largestDeleteBatch);
    c[i] = page.nextCursor;
    if (!page.scanComplete) allComplete = false;
    if (page.hasMore) {
      return {
        records,
        deletedIds,
        nextCursor: JSON.stringify({ i, c }),
        hasMore: true,
        scanComplete: false,
        ...(waiting ? { waiting } : {}),
        ...(largestDeleteBatch !== undefined ? { largestDeleteBatch } : {}),
      };
    }
    i++;
    if (i < n && records.length >= pageSize) {
      return {
        records,
        deletedIds,
        nextCursor: JSON.stringify({ i, c }),
        hasMore: true,
        scanComplete: false,
        ...(waiting ? { waiting } : {}),
        ...(largestDeleteBatch !== undefined ? { largestDeleteBatch } : {}),
      };
    }
  }
  // Every source ended its pass: the next read starts again at the first, from each one's cursor.
  return {
    records,
    deletedIds,
    nextCursor: JSON.stringify({ i: 0, c }),
    hasMore: false,
    scanComplete: allComplete,
    ...(waiting ? { waiting } : {}),
    ...(largestDeleteBatch !== undefined ? { largestDeleteBatch } : {}),
  };
}

const failed = (message: string, userFacingMessage = message): WriteResult => ({
  ok: false,
  error: { code: 'not_found', message, userFacingMessage },
});

/**
 * Writes routed to the sources: updates and deletes by their id's source position, creates to the
 * source a `Source` value names, else to the default source. Each source gets its requests in
 * batches of its own size; results come back in the requests' order, in blended form.
 */
export async function writeBlended(
  config: BlendedTableConfig,
  connectorOf: (index: number) => Promise<TableConnector>,
  requests: WriteRequest[],
  options?: WriteOptions,
): Promise<WriteResult[]> {
  const n = config.sources.length;
  const results: (WriteResult | undefined)[] = requests.map(() => undefined);
  const bySource = new Map<number, { at: number; request: WriteRequest }[]>();
  requests.forEach((request, at) => {
    let index: number;
    let routed: WriteRequest;
    if (request.kind === 'create') {
      const named = request.fields[BLENDED_SOURCE_FIELD_ID];
      const chosen = typeof named === 'string' ? config.sources.findIndex((s) => s.name === named) : -1;
      index = chosen >= 0 ? chosen : config.defaultSource;
      routed = { ...request, fields: toSource(config.fields, index, request.fields) };
    } else {
      const split = splitBlendedId(request.remoteId, n);
      if (!split) {
        results[at] = failed(
          `Record ${request.remoteId} is not a record of this blended table`,
          'This record is not in any source of the blended table.',
        );
        return;
      }
      index = split.index;
      routed =
        request.kind === 'update'
          ? {
              ...request,
              remoteId: split.id,
              fields: toSource(config.fields, index, request.fields),
              ...(request.expected ? { expected: toSource(config.fields, index, request.expected) } : {}),
            }
          : {
              ...request,
              remoteId: split.id,
              ...(request.expected ? { expected: toSource(config.fields, index, request.expected) } : {}),
            };
    }
    const list = bySource.get(index) ?? [];
    list.push({ at, request: routed });
    bySource.set(index, list);
  });
  for (const [index, list] of bySource) {
    const connector = await connectorOf(index);
    const table = (config.sources[index] as BlendedSource).tableRemoteId;
    const size = Math.max(1, connector.capabilities.batchSize);
    for (let from = 0; from < list.length; from += size) {
      const part = list.slice(from, from + size);
      const out = await connector.write(
        table,
        part.map((p) => p.request),
        options,
      );
      part.forEach((p, k) => {
        const r = out[k];
        if (!r) {
          results[p.at] = failed('The source gave no answer for this write');
          return;
        }
        if (r.ok) {
          results[p.at] = {
            ok: true,
            remoteId: blendedId(index, r.remoteId),
            postImage: r.postImage ? toBlended(config, index, r.postImage) : null,
          };
        } else {
          results[p.at] = {
            ok: false,
            error: r.error,
            ...(r.current !== undefined
              ? { current: r.current ? toBlended(config, index, r.current) : null }
              : {}),
            ...(r.existingId !== undefined ? { existingId: blendedId(index, r.existingId) } : {}),
          };
        }
      });
    }
  }
  return results.map((r) => r ?? failed('Not written'));
}

/** Records by blended id, read from each source that can fetch by id. */
export async function readBlendedRecords(
  config: BlendedTableConfig,
  connectorOf: (index: number) => Promise<TableConnector>,
  ids: string[],
): Promise<RecordData[]> {
  const bySource = new Map<number, string[]>();
  for (const id of ids) {
    const split = splitBlendedId(id, config.sources.length);
    if (!split) continue;
    bySource.set(split.index, [...(bySource.get(split.index) ?? []), split.id]);
  }
  const out: RecordData[] = [];
  for (const [index, list] of bySource) {
    const connector = await connectorOf(index);
    if (!connector.readRecords)
      throw new ConnectorError(
        'permission_denied',
        'A source cannot read records by id',
        'A source of this blended table cannot read records by id.',
      );
    const got = await connector.readRecords((config.sources[index] as BlendedSource).tableRemoteId, list);
    for (const r of got) out.push(toBlended(config, index, r));
  }
  return out;
}
