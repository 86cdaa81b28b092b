/**
 * Bulk API 2.0 (Bulk API 2.0 and Bulk API Developer Guide): query jobs and ingest jobs.
 *
 * Jobs progress on the simulator's clock: a job spends the first half of `processingMs` in
 * UploadComplete, the second half InProgress, then is JobComplete. Query jobs run their SOQL
 * when created; results are CSV pages with `Sforce-Locator` (the next page, or `null`) and
 * `Sforce-NumberOfRecords`. Ingest jobs take CSV through `PUT .../batches` while Open, start
 * when PATCHed to UploadComplete and write their rows (as API writes, each row on its own) when
 * they complete; `successfulResults`, `failedResults` and `unprocessedrecords` report them.
 */
import { json, type SimResponse } from '../http.ts';
import { COLUMN_DELIMITERS, parseCsv, toCsv } from './csv.ts';
import {
  formatDateTime,
  normalizeId,
  SalesforceApiError,
  type SalesforceState,
  type SfError,
  sfError,
  type Value,
} from './model.ts';
import { fieldDef, objectDef } from './schema.ts';
import { type FieldPath, pathValue, runQuery } from './soql.ts';

export const DEFAULT_BULK_PROCESSING_MS = 2000;
/** Rows per results page when `maxRecords` is not given. */
export const DEFAULT_RESULTS_PAGE = 50_000;

export type BulkOptions = {
  /** How long a job takes on the simulator's clock (default 2000 ms; 0 = done at the next request). */
  processingMs?: number;
};

type JobBase = {
  id: string;
  object: string;
  createdAt: number;
  apiVersion: number;
  lineEnding: 'LF' | 'CRLF';
  columnDelimiter: string;
  aborted?: number;
  deleted?: boolean;
};

type QueryJob = JobBase & {
  kind: 'query';
  operation: 'query' | 'queryAll';
  header: string[];
  rows: (string | null)[][];
};

type IngestRow = { values: Record<string, string>; raw: string[] };

type IngestJob = JobBase & {
  kind: 'ingest';
  operation: 'insert' | 'update' | 'upsert' | 'delete' | 'hardDelete';
  externalIdFieldName?: string;
  header: string[] | undefined;
  uploaded: IngestRow[];
  closedAt?: number;
  processed: boolean;
  failedMessage?: string;
  successes: { id: string; created: boolean; row: IngestRow }[];
  failures: { id: string; error: string; row: IngestRow }[];
};

type Job = QueryJob | IngestJob;

const invalidJob = (message: string) => sfError(400, 'INVALIDJOB', message);
const jobNotFound = () => sfError(404, 'NOT_FOUND', 'The requested resource does not exist');

function bulkValue(v: Value, type: string): string | null {
  if (v === null) return null;
  if (type === 'datetime' && typeof v === 'number') return new Date(v).toISOString();
  return String(v);
}

export class BulkJobs {
  readonly processingMs: number;
  readonly jobs = new Map<string, Job>();

  constructor(
    private readonly state: SalesforceState,
    options: BulkOptions = {},
  ) {
    this.processingMs = options.processingMs ?? DEFAULT_BULK_PROCESSING_MS;
  }

  private job(id: string, kind: Job['kind']): Job {
    const job = this.jobs.get(id);
    if (!job || job.kind !== kind || job.deleted) throw jobNotFound();
    return job;
  }

  private stateOf(job: Job): string {
    if (job.aborted !== undefined) return 'Aborted';
    if (job.kind === 'ingest') {
      if (job.closedAt === undefined) return 'Open';
      if (job.processed) return job.failedMessage !== undefined ? 'Failed' : 'JobComplete';
      return this.state.clock.now() - job.closedAt < this.processingMs / 2 ? 'UploadComplete' : 'InProgress';
    }
    const elapsed = this.state.clock.now() - job.createdAt;
    if (elapsed >= this.processingMs) return 'JobComplete';
    return elapsed < this.processingMs / 2 ? 'UploadComplete' : 'InProgress';
  }

  /** Process the ingest jobs whose time has come (called before every request). */
  tick(): void {
    for (const job of this.jobs.values()) {
      if (job.kind !== 'ingest' || job.processed || job.closedAt === undefined || job.aborted !== undefined)
        continue;
      if (this.state.clock.now() - job.closedAt >= this.processingMs) this.process(job);
    }
  }

  private info(job: Job): Record<string, unknown> {
    const base = {
      id: job.id,
      operation: job.operation,
      object: job.object,
      createdById: this.state.userId,
      createdDate: formatDateTime(job.createdAt),
      systemModstamp: formatDateTime((job.kind === 'ingest' ? job.closedAt : undefined) ?? job.createdAt),
      state: this.stateOf(job),
      concurrencyMode: 'Parallel',
      contentType: 'CSV',
      apiVersion: job.apiVersion,
      lineEnding: job.lineEnding,
      columnDelimiter: Object.entries(COLUMN_DELIMITERS).find(([, d]) => d === job.columnDelimiter)?.[0],
    };
    if (job.kind === 'query') {
      const complete = base.state === 'JobComplete';
      return {
        ...base,
        jobType: 'V2Query',
        numberRecordsProcessed: complete ? job.rows.length : 0,
        retries: 0,
        totalProcessingTime: complete ? 100 : 0,
        isPkChunkingSupported: true,
      };
    }
    return {
      ...base,
      ...(job.externalIdFieldName ? { externalIdFieldName: job.externalIdFieldName } : {}),
      contentUrl: `services/data/v${job.apiVersion.toFixed(1)}/jobs/ingest/${job.id}/batches`,
      jobType: 'V2Ingest',
      numberRecordsProcessed: job.processed ? job.successes.length + job.failures.length : 0,
      numberRecordsFailed: job.processed ? job.failures.length : 0,
      retries: 0,
      totalProcessingTime: job.processed ? 150 : 0,
      apiActiveProcessingTime: job.processed ? 100 : 0,
      apexProcessingTime: 0,
      ...(job.failedMessage && job.processed ? { errorMessage: job.failedMessage } : {}),
    };
  }

  private options(body: Record<string, unknown>) {
    const lineEnding = body.lineEnding === undefined ? 'LF' : body.lineEnding;
    if (lineEnding !== 'LF' && lineEnding !== 'CRLF')
      throw invalidJob(`Invalid line ending: ${String(lineEnding)}`);
    const delimName = body.columnDelimiter === undefined ? 'COMMA' : String(body.columnDelimiter);
    const columnDelimiter = COLUMN_DELIMITERS[delimName];
    if (!columnDelimiter) throw invalidJob(`Invalid column delimiter: ${delimName}`);
    if (body.contentType !== undefined && body.contentType !== 'CSV') {
      throw invalidJob(`Invalid content type: ${String(body.contentType)}`);
    }
    return { lineEnding: lineEnding as 'LF' | 'CRLF', columnDelimiter };
  }

  // -------------------------------------------------------------------------------------------
  // Query jobs

  createQuery(body: unknown, version: string): SimResponse {
    const b = (body ?? {}) as Record<string, unknown>;
    if (b.operation !== 'query' && b.operation !== 'queryAll') {
      throw invalidJob(`Invalid operation: ${String(b.operation)}`);
    }
    if (typeof b.query !== 'string' || b.query.trim() === '') throw invalidJob('Query is required');
    const opts = this.options(b);
    const result = runQuery(this.state, b.query, { all: b.operation === 'queryAll' });
    if (result.query.count) throw invalidJob('COUNT() is not supported in Bulk API 2.0 queries');
    const fields = result.query.fields;
    const header = fields.map((p) => p.text);
    const rows = result.records.map((r) =>
      fields.map((p: FieldPath) => bulkValue(pathValue(this.state, r, p), p.field.type)),
    );
    const job: QueryJob = {
      kind: 'query',
      id: this.state.makeId('750'),
      object: result.query.object.name,
      operation: b.operation,
      createdAt: this.state.clock.now(),
      apiVersion: Number(version),
      header,
      rows,
      ...opts,
    };
    this.jobs.set(job.id, job);
    return json(200, this.info(job));
  }

  getQuery(id: string): SimResponse {
    return json(200, this.info(this.job(id, 'query')));
  }

  queryResults(id: string, query: URLSearchParams): SimResponse {
    const job = this.job(id, 'query') as QueryJob;
    const st = this.stateOf(job);
    if (st !== 'JobComplete') {
      throw sfError(400, 'INVALIDJOBSTATE', `Job is not in a valid state to retrieve results: ${st}`);
    }
    const locator = query.get('locator');
    let offset = 0;
    if (locator !== null && locator !== '') {
      offset = Number(Buffer.from(locator, 'base64').toString('utf8'));
      if (!Number.isInteger(offset) || offset < 0 || offset > job.rows.length) {
        throw sfError(400, 'INVALID_LOCATOR', `Invalid locator: ${locator}`);
      }
    }
    const maxParam = query.get('maxRecords');
    const max = maxParam === null ? DEFAULT_RESULTS_PAGE : Number(maxParam);
    if (!Number.isInteger(max) || max <= 0)
      throw sfError(400, 'INVALIDJOB', `Invalid maxRecords: ${maxParam}`);
    const page = job.rows.slice(offset, offset + max);
    const nextOffset = offset + page.length;
    const next =
      nextOffset < job.rows.length
        ? Buffer.from(String(nextOffset)).toString('base64').replace(/=+$/, '')
        : 'null';
    const eol = job.lineEnding === 'CRLF' ? '\r\n' : '\n';
    return {
      status: 200,
      headers: {
        'content-type': 'text/csv',
        'Sforce-Locator': next,
        'Sforce-NumberOfRecords': String(page.length),
      },
      text: toCsv([job.header, ...page], job.columnDelimiter, eol),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Ingest jobs

  createIngest(body: unknown, version: string): SimResponse {
    const b = (body ?? {}) as Record<string, unknown>;
    const ops = ['insert', 'update', 'upsert', 'delete', 'hardDelete'];
    if (typeof b.operation !== 'string' || !ops.includes(b.operation)) {
      throw invalidJob(`Invalid operation: ${String(b.operation)}`);
    }
    const obj = typeof b.object === 'string' ? objectDef(b.object) : undefined;
    if (!obj) throw invalidJob(`Unable to find object: ${String(b.object)}`);
    let externalIdFieldName: string | undefined;
    if (b.operation === 'upsert') {
      const fd = typeof b.externalIdFieldName === 'string' ? fieldDef(obj, b.externalIdFieldName) : undefined;
      if (!fd || !(fd.externalId || fd.name === 'Id')) {
        throw invalidJob(
          `External ID was blank or invalid for ${obj.name}: ${String(b.externalIdFieldName)}`,
        );
      }
      externalIdFieldName = fd.name;
    }
    const job: IngestJob = {
      kind: 'ingest',
      id: this.state.makeId('750'),
      object: obj.name,
      operation: b.operation as IngestJob['operation'],
      createdAt: this.state.clock.now(),
      apiVersion: Number(version),
      header: undefined,
      uploaded: [],
      processed: false,
      successes: [],
      failures: [],
      ...(externalIdFieldName ? { externalIdFieldName } : {}),
      ...this.options(b),
    };
    this.jobs.set(job.id, job);
    return json(200, this.info(job));
  }

  upload(id: string, csv: string): SimResponse {
    const job = this.job(id, 'ingest') as IngestJob;
    if (this.stateOf(job) !== 'Open') {
      throw invalidJob(`Job ${id} is not in the Open state; data can only be uploaded to an Open job`);
    }
    const rows = parseCsv(csv, job.columnDelimiter);
    const [header, ...data] = rows;
    if (!header) throw sfError(400, 'INVALIDJOB', 'The CSV data is empty');
    if (job.header && job.header.join('\u0000') !== header.join('\u0000')) {
      throw invalidJob('The header row of every upload must be the same');
    }
    job.header = header;
    for (const raw of data) {
      const values: Record<string, string> = {};
      header.forEach((h, i) => {
        values[h] = raw[i] ?? '';
      });
      job.uploaded.push({ values, raw });
    }
    return { status: 201 };
  }

  patchIngest(id: string, body: unknown): SimResponse {
    const job = this.job(id, 'ingest') as IngestJob;
    const want = (body as { state?: unknown } | undefined)?.state;
    const current = this.stateOf(job);
    if (want === 'UploadComplete') {
      if (current !== 'Open') throw invalidJob(`Job ${id} is not Open (state ${current})`);
      job.closedAt = this.state.clock.now();
      if (this.processingMs === 0) this.process(job);
    } else if (want === 'Aborted') {
      if (current === 'JobComplete' || current === 'Failed' || current === 'Aborted') {
        throw invalidJob(`Job ${id} is already finished (state ${current})`);
      }
      job.aborted = this.state.clock.now();
    } else {
      throw invalidJob(`Invalid state: ${String(want)}`);
    }
    return json(200, this.info(job));
  }

  patchQuery(id: string, body: unknown): SimResponse {
    const job = this.job(id, 'query');
    const want = (body as { state?: unknown } | undefined)?.state;
    if (want !== 'Aborted') throw invalidJob(`Invalid state: ${String(want)}`);
    const current = this.stateOf(job);
    if (current === 'JobComplete' || current === 'Aborted') {
      throw invalidJob(`Job ${id} is already finished (state ${current})`);
    }
    job.aborted = this.state.clock.now();
    return json(200, this.info(job));
  }

  getIngest(id: string): SimResponse {
    return json(200, this.info(this.job(id, 'ingest')));
  }

  deleteJob(id: string, kind: Job['kind']): SimResponse {
    const job = this.job(id, kind);
    const st = this.stateOf(job);
    if (st === 'UploadComplete' || st === 'InProgress') {
      throw invalidJob(`Job ${id} is still being processed and cannot be deleted`);
    }
    job.deleted = true;
    return { status: 204 };
  }

  list(kind: Job['kind']): SimResponse {
    const records = [...this.jobs.values()]
      .filter((j) => j.kind === kind && !j.deleted)
      .map((j) => this.info(j));
    return json(200, { done: true, records, nextRecordsUrl: null });
  }

  ingestResults(
    id: string,
    which: 'successfulResults' | 'failedResults' | 'unprocessedrecords',
  ): SimResponse {
    const job = this.job(id, 'ingest') as IngestJob;
    const header = job.header ?? [];
    const eol = job.lineEnding === 'CRLF' ? '\r\n' : '\n';
    const csv = (rows: (string | null)[][]) => ({
      status: 200,
      headers: { 'content-type': 'text/csv' },
      text: toCsv(rows, job.columnDelimiter, eol),
    });
    if (which === 'unprocessedrecords') {
      const unprocessed = job.processed && !job.failedMessage ? [] : job.uploaded.map((r) => r.raw);
      return csv([header, ...unprocessed]);
    }
    const st = this.stateOf(job);
    if (st !== 'JobComplete' && st !== 'Failed' && st !== 'Aborted') {
      throw sfError(400, 'INVALIDJOBSTATE', `Job is not in a valid state to retrieve results: ${st}`);
    }
    if (which === 'successfulResults') {
      return csv([
        ['sf__Id', 'sf__Created', ...header],
        ...job.successes.map((s) => [s.id, String(s.created), ...s.row.raw]),
      ]);
    }
    return csv([
      ['sf__Id', 'sf__Error', ...header],
      ...job.failures.map((f) => [f.id, f.error, ...f.row.raw]),
    ]);
  }

  /** Write an ingest job's rows, each as its own API write. */
  private process(job: IngestJob): void {
    job.processed = true;
    const obj = objectDef(job.object);
    if (!obj) return;
    const header = job.header ?? [];
    const unknown = header.find((h) => !fieldDef(obj, h));
    if (unknown !== undefined) {
      job.failedMessage = `InvalidBatch : Field name not found : ${unknown}`;
      return;
    }
    const errorText = (errors: SfError[]) =>
      errors.map((e) => `${e.errorCode}:${e.message}:${(e.fields ?? []).join(',')} --`).join(' ');
    for (const row of job.uploaded) {
      // Empty cells are left alone; '#N/A' sets a field to null.
      const input: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(row.values)) {
        if (v === '') continue;
        input[k] = v === '#N/A' ? null : v;
      }
      const idKey = Object.keys(input).find((k) => k.toLowerCase() === 'id');
      const rawId = idKey ? String(input[idKey]) : '';
      if (idKey) delete input[idKey];
      try {
        if (job.operation === 'insert') {
          const rec = this.state.create(obj.name, input, 'api');
          job.successes.push({ id: rec.id, created: true, row });
        } else if (job.operation === 'update') {
          if (!rawId) throw sfError(400, 'MISSING_ARGUMENT', 'Id not specified in an update call', []);
          const rec = this.state.update(obj.name, this.checkId(rawId), input, 'api');
          job.successes.push({ id: rec.id, created: false, row });
        } else if (job.operation === 'delete' || job.operation === 'hardDelete') {
          if (!rawId) throw sfError(400, 'MISSING_ARGUMENT', 'Id not specified in a delete call', []);
          const rec = this.state.remove(obj.name, this.checkId(rawId), 'api');
          if (job.operation === 'hardDelete') this.state.records.delete(rec.id);
          job.successes.push({ id: rec.id, created: false, row });
        } else {
          const key = job.externalIdFieldName as string;
          const fd = fieldDef(obj, key);
          const keyValue = rawId || String(input[fd?.name ?? key] ?? '');
          if (!keyValue) throw sfError(400, 'MISSING_ARGUMENT', `${key} not specified`, []);
          const existing =
            key === 'Id'
              ? this.state.find(keyValue)
              : fd
                ? this.state.findByUnique(obj, fd, keyValue)
                : undefined;
          if (existing && !existing.deleted) {
            const rec = this.state.update(obj.name, existing.id, input, 'api');
            job.successes.push({ id: rec.id, created: false, row });
          } else {
            const rec = this.state.create(obj.name, input, 'api');
            job.successes.push({ id: rec.id, created: true, row });
          }
        }
      } catch (err) {
        if (!(err instanceof SalesforceApiError)) throw err;
        job.failures.push({ id: rawId, error: errorText(err.errors), row });
      }
    }
  }

  private checkId(raw: string): string {
    const id = normalizeId(raw);
    if (!id) throw sfError(400, 'MALFORMED_ID', `malformed id ${raw}`, []);
    return id;
  }
}
