import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';

/**
 * API import (spec section 7, /rest/api-import): records from any JSON HTTP API brought into a
 * table of a connected app, one way, optionally on a schedule, upserted by the record's id field.
 */

/** The canonical types a field of an API's records is given from its sample values. */
export const ApiFieldType = z.enum(['text', 'number', 'boolean', 'date', 'datetime', 'url', 'email', 'json']);
export type ApiFieldType = z.infer<typeof ApiFieldType>;

/** What is shown instead of a secret (a header's or the auth's value) once it is stored. */
export const MASKED_SECRET = '••••••••';

export const ApiAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(4000) }),
  z.strictObject({
    type: z.literal('basic'),
    username: z.string().max(1000),
    password: z.string().max(4000),
  }),
  z.strictObject({
    type: z.literal('api_key'),
    /** The header the key is sent in, e.g. X-Api-Key. */
    header: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name'),
    value: z.string().min(1).max(4000),
  }),
]);
export type ApiAuth = z.infer<typeof ApiAuth>;

export const ApiPagination = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  /** ?page=1, 2, 3 ... until a page has no records (or fewer than `size`). */
  z.strictObject({
    type: z.literal('page'),
    param: z.string().min(1).max(100),
    start: z.number().int().min(0).max(1_000_000).default(1),
    sizeParam: z.string().min(1).max(100).nullable().default(null),
    size: z.number().int().min(1).max(10_000).nullable().default(null),
  }),
  /** ?offset=0&limit=100, then offset=100 ... until a page has fewer than `limit` records. */
  z.strictObject({
    type: z.literal('offset'),
    offsetParam: z.string().min(1).max(100),
    limitParam: z.string().min(1).max(100),
    limit: z.number().int().min(1).max(10_000),
    start: z.number().int().min(0).default(0),
  }),
  /** The next page's cursor is read from the response (`path`, JSONPath) and sent as ?param=. */
  z.strictObject({
    type: z.literal('cursor'),
    param: z.string().min(1).max(100),
    path: z.string().min(1).max(500),
  }),
  /** The next page's address is in the Link header, rel="next" (RFC 8288). */
  z.strictObject({ type: z.literal('link_header') }),
  /** The next page's full address is a field of the response (`path`, JSONPath), e.g. `$.next`. */
  z.strictObject({ type: z.literal('next_url'), path: z.string().min(1).max(500) }),
]);
export type ApiPagination = z.infer<typeof ApiPagination>;

export const ApiField = z.strictObject({
  /** The key of the field in each record (top level of a record). */
  name: z.string().min(1).max(300),
  type: ApiFieldType,
});
export type ApiField = z.infer<typeof ApiField>;

const HttpUrl = z
  .string()
  .max(4000)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

const HeaderName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name');

/** How to read an API: the request, where the records are, how to page, the id and the fields. */
export const ApiFetchConfig = z.strictObject({
  method: z.enum(['GET', 'POST']).default('GET'),
  url: HttpUrl,
  headers: z.record(HeaderName, z.string().max(8000)).default({}),
  /** A JSON body for POST. */
  body: z.string().max(100_000).nullable().default(null),
  auth: ApiAuth.default({ type: 'none' }),
  /** JSONPath to the records in a response, e.g. `$.data[*]`. */
  recordsPath: z.string().min(1).max(500),
  pagination: ApiPagination.default({ type: 'none' }),
  /** The record's id field (a field name); upserts match on it. */
  idField: z.string().min(1).max(300).nullable(),
  fields: z.array(ApiField).max(500).default([]),
});
export type ApiFetchConfig = z.infer<typeof ApiFetchConfig>;

export const GenerateFetchBody = z.strictObject({
  /** A sample URL to call (with the headers and auth below), or ... */
  url: HttpUrl.optional(),
  method: z.enum(['GET', 'POST']).default('GET'),
  headers: z.record(HeaderName, z.string().max(8000)).default({}),
  body: z.string().max(100_000).nullable().default(null),
  auth: ApiAuth.default({ type: 'none' }),
  /** ... a pasted sample response (JSON text). */
  sample: z.string().max(2_000_000).optional(),
  /** The pagination to use instead of the one detected. */
  pagination: ApiPagination.optional(),
  /** The records' path to use instead of the one detected. */
  recordsPath: z.string().min(1).max(500).optional(),
});

export const ApiSampleRecord = z.record(z.string(), z.unknown());

export const GenerateFetchResponse = z.object({
  config: ApiFetchConfig,
  /** How each part of the proposal was found, for a person. */
  reasons: z.array(z.string()),
  /** The first records found at `recordsPath` (up to 10). */
  sampleRecords: z.array(ApiSampleRecord),
  /** Other arrays of objects in the response that could hold the records. */
  candidatePaths: z.array(z.object({ path: z.string(), count: z.number().int() })),
});

export const FetchBody = z.strictObject({
  config: ApiFetchConfig,
  /** Pages read at most (1..100). */
  maxPages: z.number().int().min(1).max(100).default(20),
  /** Records read at most. */
  maxRecords: z.number().int().min(1).max(10_000).default(1000),
  /** Records returned in the answer. */
  previewCount: z.number().int().min(1).max(200).default(50),
});

export const FetchResponse = z.object({
  records: z.array(ApiSampleRecord),
  totalCount: z.number().int(),
  pagesRead: z.number().int(),
  /** Why reading stopped: the last page, or a cap. */
  stoppedBecause: z.enum(['last_page', 'page_cap', 'record_cap', 'repeated_page']),
});

export const ApiImportSchedule = z.enum(['none', 'hourly', 'daily']);
export type ApiImportSchedule = z.infer<typeof ApiImportSchedule>;

/** One source field written to one field of the target table (the target's field id). */
export const ApiFieldMapping = z.strictObject({
  sourceField: z.string().min(1).max(300),
  targetFieldId: z.string().min(1).max(300),
});
export type ApiFieldMapping = z.infer<typeof ApiFieldMapping>;

export const ApiImportTarget = z.strictObject({
  connectionId: z.string().uuid('must be a connection id (a UUID)'),
  /** The base (database schema, Airtable base, ...) as the connection's bases list names it. */
  baseRemoteId: z.string().min(1).max(500),
  tableRemoteId: z.string().min(1).max(500),
});

export const ApiImportBody = z.strictObject({
  name: z.string().min(1).max(200),
  config: ApiFetchConfig,
  target: ApiImportTarget,
  /** The user's mapping; when absent, automap's proposal is used. */
  mapping: z.array(ApiFieldMapping).max(500).optional(),
  schedule: ApiImportSchedule.default('none'),
  /** Runs at once (default), or only on its schedule / when asked. */
  runNow: z.boolean().default(true),
  maxPages: z.number().int().min(1).max(1000).default(100),
  maxRecords: z.number().int().min(1).max(100_000).default(10_000),
});

export const ApiImportCounts = z.object({
  fetched: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
});
export type ApiImportCounts = z.infer<typeof ApiImportCounts>;

export const ApiImportStatus = z.enum(['never', 'queued', 'running', 'succeeded', 'failed']);

export const ApiImport = z.object({
  id: Uuid,
  name: z.string(),
  /** Secret values (auth, sensitive headers) are masked. */
  config: ApiFetchConfig,
  target: z.object({
    connectionId: z.string(),
    connectionName: z.string().nullable(),
    connectionType: z.string().nullable(),
    baseRemoteId: z.string(),
    tableRemoteId: z.string(),
  }),
  mapping: z.array(ApiFieldMapping),
  /** The target field the source id field is written to: existing records are matched on it. */
  matchTargetFieldId: z.string(),
  schedule: ApiImportSchedule,
  maxPages: z.number().int(),
  maxRecords: z.number().int(),
  lastRunStatus: ApiImportStatus,
  lastRunAt: IsoTimestamp.nullable(),
  lastRunFinishedAt: IsoTimestamp.nullable(),
  lastRunCounts: ApiImportCounts.nullable(),
  lastRunError: z.string().nullable(),
  /** The progress tracker of the last run (GET /rest/progress/{trackingId}). */
  lastTrackingId: Uuid.nullable(),
  nextRunAt: IsoTimestamp.nullable(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type ApiImport = z.infer<typeof ApiImport>;

export const ApiImportStarted = z.object({ apiImport: ApiImport, trackingId: Uuid.nullable() });

export const PatchApiImportBody = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  schedule: ApiImportSchedule.optional(),
});

export const ApiTargetTablesBody = z.strictObject({
  connectionId: z.string().uuid('must be a connection id (a UUID)'),
  baseRemoteId: z.string().min(1).max(500),
});

export const ApiTargetField = z.object({
  remoteId: z.string(),
  name: z.string(),
  type: z.string(),
  readOnly: z.boolean(),
});

export const ApiTargetTablesResponse = z.object({
  tables: z.array(z.object({ remoteId: z.string(), name: z.string(), fields: z.array(ApiTargetField) })),
});

export const ApiAutomapBody = z.strictObject({
  target: ApiImportTarget,
  fields: z.array(ApiField).min(1).max(500),
  idField: z.string().min(1).max(300).nullable().default(null),
  /** Sample records, to compare values with (optional). */
  sampleRecords: z.array(ApiSampleRecord).max(100).default([]),
});

export const ApiAutomapResponse = z.object({
  mapping: z.array(
    ApiFieldMapping.extend({
      score: z.number(),
      explanation: z.string(),
    }),
  ),
  targetFields: z.array(ApiTargetField),
  unmatchedSource: z.array(z.string()),
  /** The target field proposed for the id field (null: none matched; the user must choose). */
  matchTargetFieldId: z.string().nullable(),
});
