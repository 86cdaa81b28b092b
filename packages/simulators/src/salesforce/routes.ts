/**
 * HTTP routes of the Salesforce simulator: OAuth (`/services/oauth2/*`), the identity URL, the
 * REST API under `/services/data/vXX.X/` (versions, resources, limits, sObject describe and
 * rows, updated/deleted, SOQL query and queryAll, sObject Collections) and Bulk API 2.0 jobs.
 * Bodies follow the REST API Developer Guide; errors are Salesforce's JSON arrays of
 * `{message, errorCode, fields?}`; every versioned response carries `Sforce-Limit-Info`.
 */
import {
  bearerToken,
  FaultInjector,
  json,
  RequestLog,
  type RunningServer,
  type SimRequest,
  type SimResponse,
  startHttpServer,
} from '../http.ts';
import { BulkJobs, type BulkOptions } from './bulk.ts';
import { ApiUsage, type RateLimitOptions } from './limits.ts';
import {
  DAY_MS,
  formatDateTime,
  normalizeId,
  notFound,
  parseDateTime,
  SalesforceApiError,
  type SalesforceState,
  type SfError,
  type SfRecord,
  sfError,
} from './model.ts';
import { type OAuthOptions, OAuthServer } from './oauth.ts';
import { describeGlobalEntry, describeObject, type FieldDef, fieldDef, type ObjectDef } from './schema.ts';
import { attributes, type FieldPath, renderRow, renderValue, runQuery } from './soql.ts';

export const LATEST_VERSION = '63.0';
export const OLDEST_VERSION = '31.0';
export const DEFAULT_QUERY_BATCH_SIZE = 2000;
export const MAX_COLLECTION_RECORDS = 200;
/** Query cursors expire after 15 minutes without use. */
export const CURSOR_TTL_MS = 15 * 60_000;

export type SalesforceServerOptions = {
  /** `false` turns the daily API allocation off (usage is still reported). */
  rateLimit?: false | RateLimitOptions;
  bulk?: BulkOptions;
  oauth?: OAuthOptions;
};

export type SalesforceServer = RunningServer & {
  faults: FaultInjector;
  requestLog: RequestLog;
  usage: ApiUsage;
  oauth: OAuthServer;
  bulk: BulkJobs;
};

const SESSION_INVALID: SfError = { message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' };
const LIMIT_EXCEEDED: SfError = {
  message: 'TotalRequests Limit exceeded.',
  errorCode: 'REQUEST_LIMIT_EXCEEDED',
};

function errorResponse(err: SalesforceApiError): SimResponse {
  return json(err.status, err.errors);
}

/** "Winter '25" for 62.0: three releases a year since Winter '11 (20.0). */
function releaseLabel(version: number): string {
  const n = version - 20;
  const season = ['Winter', 'Spring', 'Summer'][n % 3];
  return `${season} '${String(11 + Math.floor(n / 3)).padStart(2, '0')}`;
}

function supportedVersions(): string[] {
  const out: string[] = [];
  for (let v = Number(OLDEST_VERSION); v <= Number(LATEST_VERSION); v++) out.push(v.toFixed(1));
  return out;
}

const methodNotAllowed = (method: string, allowed: string[]) =>
  sfError(405, 'METHOD_NOT_ALLOWED', `HTTP Method '${method}' not allowed. Allowed are ${allowed.join(',')}`);

type Cursor = { rows: Record<string, unknown>[]; totalSize: number; expiresAt: number; all: boolean };

export async function startSalesforceServer(
  state: SalesforceState,
  options: SalesforceServerOptions = {},
): Promise<SalesforceServer> {
  const faults = new FaultInjector();
  const requestLog = new RequestLog();
  const usage = new ApiUsage(state.clock, options.rateLimit || {}, options.rateLimit !== false);
  const oauth = new OAuthServer(state, options.oauth);
  const bulk = new BulkJobs(state, options.bulk);
  const cursors = new Map<string, Cursor>();
  const versions = new Set(supportedVersions());

  function origin(req: SimRequest): string {
    return `http://${req.headers.host ?? '127.0.0.1'}`;
  }

  async function handle(req: SimRequest): Promise<SimResponse> {
    bulk.tick();
    const parts = req.path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    try {
      if (parts[0] === 'services' && parts[1] === 'oauth2' && parts.length === 3) {
        if (parts[2] === 'authorize' && req.method === 'GET') return oauth.authorize(req.query);
        if (parts[2] === 'token' && req.method === 'POST') return oauth.token(req.body, origin(req));
        if (parts[2] === 'revoke' && (req.method === 'POST' || req.method === 'GET')) {
          return oauth.revoke(req.body, req.query);
        }
        throw notFound();
      }
      if (parts[0] === 'id' && parts.length === 3 && req.method === 'GET')
        return identity(req, parts[1], parts[2]);
      if (parts[0] === 'services' && parts[1] === 'data') {
        if (parts.length === 2) {
          if (req.method !== 'GET') throw methodNotAllowed(req.method, ['GET', 'HEAD']);
          return json(
            200,
            supportedVersions().map((v) => ({
              label: releaseLabel(Number(v)),
              url: `/services/data/v${v}`,
              version: v,
            })),
          );
        }
        return await versioned(req, parts.slice(2));
      }
      throw notFound();
    } catch (err) {
      if (err instanceof SalesforceApiError) return errorResponse(err);
      throw err;
    }
  }

  function identity(req: SimRequest, org: string | undefined, user: string | undefined): SimResponse {
    const token = bearerToken(req.headers) ?? req.query.get('oauth_token') ?? undefined;
    if (!state.tokens.check(token).ok) return { status: 403, text: 'Bad_OAuth_Token' };
    if (org !== state.orgId || user !== state.userId) return { status: 404, text: 'Bad_Id' };
    const base = origin(req);
    const org15 = state.orgId.slice(0, 15);
    return json(200, {
      id: oauth.identityUrl(base),
      asserted_user: true,
      user_id: state.userId,
      organization_id: state.orgId,
      username: state.username,
      nick_name: 'integration',
      display_name: 'Integration User',
      email: state.username,
      email_verified: true,
      first_name: 'Integration',
      last_name: 'User',
      timezone: 'America/Los_Angeles',
      active: true,
      user_type: 'STANDARD',
      language: 'en_US',
      locale: 'en_US',
      utcOffset: -28_800_000,
      last_modification_date: formatDateTime(state.clock.now()),
      is_app_installed: true,
      urls: {
        enterprise: `${base}/services/Soap/c/{version}/${org15}`,
        metadata: `${base}/services/Soap/m/{version}/${org15}`,
        partner: `${base}/services/Soap/u/{version}/${org15}`,
        rest: `${base}/services/data/v{version}/`,
        sobjects: `${base}/services/data/v{version}/sobjects/`,
        search: `${base}/services/data/v{version}/search/`,
        query: `${base}/services/data/v{version}/query/`,
        recent: `${base}/services/data/v{version}/recent/`,
        profile: `${base}/${state.userId}`,
        custom_domain: base,
      },
    });
  }

  async function versioned(req: SimRequest, parts: string[]): Promise<SimResponse> {
    const m = /^v(\d+\.\d)$/.exec(parts[0] ?? '');
    if (!m || !versions.has(m[1] as string)) throw notFound();
    const version = m[1] as string;

    const token = bearerToken(req.headers);
    const check = state.tokens.check(token);
    if (!check.ok) return json(401, [SESSION_INVALID], { 'WWW-Authenticate': 'Token' });
    if (!usage.take()) return json(403, [LIMIT_EXCEEDED], { 'Sforce-Limit-Info': usage.header() });
    oauth.touch(check.info.token);

    let response: SimResponse;
    try {
      if (req.bodyInvalid && !isCsvUpload(req)) {
        throw sfError(
          400,
          'JSON_PARSER_ERROR',
          "Unexpected character: expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false') at [line:1, column:1]",
        );
      }
      response = await route(req, parts.slice(1), version);
    } catch (err) {
      if (!(err instanceof SalesforceApiError)) throw err;
      response = errorResponse(err);
    }
    response.headers = { 'Sforce-Limit-Info': usage.header(), ...response.headers };
    return response;
  }

  function isCsvUpload(req: SimRequest): boolean {
    return (req.headers['content-type'] ?? '').startsWith('text/csv');
  }

  function route(req: SimRequest, p: string[], version: string): SimResponse | Promise<SimResponse> {
    const method = req.method;
    const only = (allowed: string[], run: () => SimResponse | Promise<SimResponse>) => {
      if (!allowed.includes(method)) throw methodNotAllowed(method, allowed);
      return run();
    };
    const [head, a, b, c] = p;
    if (p.length === 0) return only(['GET'], () => resources(req, version));
    if (head === 'limits' && p.length === 1) return only(['GET'], () => limits());
    if (head === 'sobjects') {
      if (p.length === 1) {
        return only(['GET'], () =>
          json(200, {
            encoding: 'UTF-8',
            maxBatchSize: 200,
            sobjects: state.objects().map((o) => describeGlobalEntry(o, version)),
          }),
        );
      }
      const obj = state.object(a as string);
      if (p.length === 2) {
        return only(['GET', 'POST'], () =>
          method === 'GET'
            ? json(200, { objectDescribe: describeGlobalEntry(obj, version), recentItems: [] })
            : createRecord(obj, req),
        );
      }
      if (p.length === 3 && b === 'describe')
        return only(['GET'], () => json(200, describeObject(obj, version)));
      if (p.length === 3 && (b === 'updated' || b === 'deleted')) {
        return only(['GET'], () => replication(obj, b, req));
      }
      if (p.length === 3) {
        return only(['GET', 'PATCH', 'DELETE'], () => recordRoute(obj, b as string, req, version));
      }
      if (p.length === 4) {
        return only(['GET', 'PATCH'], () => externalIdRoute(obj, b as string, c as string, req, version));
      }
      throw notFound();
    }
    if ((head === 'query' || head === 'queryAll') && p.length <= 2) {
      return only(['GET'], () =>
        p.length === 1 ? query(req, version, head === 'queryAll') : queryMore(a as string, version),
      );
    }
    if (head === 'composite' && a === 'sobjects') {
      if (p.length === 2) return only(['POST', 'PATCH', 'DELETE'], () => collection(req));
      if (p.length === 3)
        return only(['GET', 'POST'], () => retrieveMany(state.object(b as string), req, version));
      throw notFound();
    }
    if (head === 'jobs' && (a === 'query' || a === 'ingest')) return jobs(req, a, p.slice(2), version);
    throw notFound();
  }

  // -------------------------------------------------------------------------------------------
  // Resources and limits

  function resources(req: SimRequest, version: string): SimResponse {
    const base = `/services/data/v${version}`;
    return json(200, {
      tooling: `${base}/tooling`,
      metadata: `${base}/metadata`,
      composite: `${base}/composite`,
      jobs: `${base}/jobs`,
      query: `${base}/query`,
      queryAll: `${base}/queryAll`,
      limits: `${base}/limits`,
      recent: `${base}/recent`,
      search: `${base}/search`,
      sobjects: `${base}/sobjects`,
      identity: oauth.identityUrl(origin(req)),
    });
  }

  function limits(): SimResponse {
    const jobsToday = [...bulk.jobs.values()];
    const queryJobs = jobsToday.filter(
      (j) => j.kind === 'query' && j.createdAt > state.clock.now() - DAY_MS,
    ).length;
    const ingestJobs = jobsToday.filter(
      (j) => j.kind === 'ingest' && j.createdAt > state.clock.now() - DAY_MS,
    ).length;
    return json(200, {
      ConcurrentAsyncGetReportInstances: { Max: 200, Remaining: 200 },
      ConcurrentSyncReportRuns: { Max: 20, Remaining: 20 },
      DailyApiRequests: { Max: usage.max, Remaining: Math.max(0, usage.max - usage.used) },
      DailyAsyncApexExecutions: { Max: 250_000, Remaining: 250_000 },
      DailyBulkApiBatches: { Max: 15_000, Remaining: 15_000 - ingestJobs },
      DailyBulkV2QueryFileStorageMB: { Max: 976_562, Remaining: 976_562 },
      DailyBulkV2QueryJobs: { Max: 10_000, Remaining: 10_000 - queryJobs },
      DataStorageMB: { Max: 5, Remaining: 5 },
      FileStorageMB: { Max: 20, Remaining: 20 },
      SingleEmail: { Max: 15, Remaining: 15 },
    });
  }

  // -------------------------------------------------------------------------------------------
  // Rows

  function body(req: SimRequest): Record<string, unknown> {
    const b = req.body;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) {
      throw sfError(400, 'JSON_PARSER_ERROR', 'The request body must be a JSON object');
    }
    return b as Record<string, unknown>;
  }

  function fieldsParam(obj: ObjectDef, raw: string | null): FieldDef[] {
    if (raw === null) return obj.fields;
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((name) => {
        const fd = fieldDef(obj, name);
        if (!fd) {
          throw sfError(
            400,
            'INVALID_FIELD',
            `No such column '${name}' on entity '${obj.name}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`,
          );
        }
        return fd;
      });
  }

  function renderRecord(rec: SfRecord, fields: FieldDef[], version: string): Record<string, unknown> {
    const out: Record<string, unknown> = { attributes: attributes(rec.object, rec.id, version) };
    for (const fd of fields) out[fd.name] = renderValue(fd, state.value(rec, fd));
    return out;
  }

  /** `/sobjects/{o}/{x}`: x is a record id, or (when not an id) taken as an external id field. */
  function resolveRecordId(raw: string): string {
    const id = normalizeId(raw);
    if (!id) {
      throw sfError(
        404,
        'NOT_FOUND',
        `Provided external ID field does not exist or is not accessible: ${raw}`,
      );
    }
    return id;
  }

  function createRecord(obj: ObjectDef, req: SimRequest): SimResponse {
    const rec = state.create(obj.name, body(req), 'api');
    return json(201, { id: rec.id, success: true, errors: [] });
  }

  function recordRoute(obj: ObjectDef, raw: string, req: SimRequest, version: string): SimResponse {
    const id = resolveRecordId(raw);
    if (req.method === 'GET') {
      const rec = state.getLive(obj.name, id);
      return json(200, renderRecord(rec, fieldsParam(obj, req.query.get('fields')), version));
    }
    if (req.method === 'PATCH') {
      state.update(obj.name, id, body(req), 'api');
      return { status: 204 };
    }
    state.remove(obj.name, id, 'api');
    return { status: 204 };
  }

  /** GET or upsert (PATCH) by an external id field: `/sobjects/{o}/{field}/{value}`. */
  function externalIdRoute(
    obj: ObjectDef,
    field: string,
    value: string,
    req: SimRequest,
    version: string,
  ): SimResponse {
    const fd = fieldDef(obj, field);
    if (!fd || !(fd.externalId || fd.idLookup) || fd.type === 'id') {
      throw sfError(
        404,
        'NOT_FOUND',
        `Provided external ID field does not exist or is not accessible: ${field}`,
      );
    }
    const existing = state.findByUnique(obj, fd, value);
    if (req.method === 'GET') {
      if (!existing) throw notFound();
      return json(200, renderRecord(existing, fieldsParam(obj, req.query.get('fields')), version));
    }
    if (!fd.externalId) throw sfError(400, 'INVALID_FIELD', `Field ${fd.name} is not an external id field`);
    const input = body(req);
    if (existing) {
      state.update(obj.name, existing.id, input, 'api');
      return json(200, { id: existing.id, success: true, errors: [], created: false });
    }
    const rec = state.create(obj.name, { ...input, [fd.name]: value }, 'api');
    return json(201, { id: rec.id, success: true, errors: [], created: true });
  }

  // -------------------------------------------------------------------------------------------
  // sObject Get Updated / Get Deleted

  function replication(obj: ObjectDef, kind: 'updated' | 'deleted', req: SimRequest): SimResponse {
    const parse = (name: string) => {
      const raw = req.query.get(name);
      if (raw === null) throw sfError(400, 'MISSING_ARGUMENT', `${name} parameter is required`);
      const t = parseDateTime(raw);
      if (Number.isNaN(t)) throw sfError(400, 'INVALID_REPLICATION_DATE', `Invalid ${name} date: ${raw}`);
      // The API ignores the seconds: 12:30:15 becomes 12:30:00.
      return Math.floor(t / 60_000) * 60_000;
    };
    const start = parse('start');
    const end = parse('end');
    if (start >= end)
      throw sfError(400, 'INVALID_REPLICATION_DATE', 'startDate must chronologically precede endDate');
    const now = state.clock.now();
    const days = kind === 'updated' ? 30 : state.recycleBinDays;
    if (start < now - days * DAY_MS) {
      throw sfError(400, 'INVALID_REPLICATION_DATE', `startDate cannot be more than ${days} days ago`);
    }
    const covered = Math.min(end, Math.floor(now / 60_000) * 60_000);
    if (kind === 'updated') {
      return json(200, {
        ids: state.updatedIds(obj.name, start, covered),
        latestDateCovered: formatDateTime(covered),
      });
    }
    return json(200, {
      deletedRecords: state
        .deletedRecords(obj.name, start, covered)
        .map((d) => ({ id: d.id, deletedDate: formatDateTime(d.deletedDate) })),
      earliestDateAvailable: formatDateTime(
        Math.floor(state.earliestDeletedAvailable(obj.name) / 60_000) * 60_000,
      ),
      latestDateCovered: formatDateTime(covered),
    });
  }

  // -------------------------------------------------------------------------------------------
  // Query

  function batchSize(req: SimRequest): number {
    const opts = req.headers['sforce-query-options'];
    const m = typeof opts === 'string' ? /batchSize\s*=\s*(\d+)/i.exec(opts) : null;
    if (!m) return DEFAULT_QUERY_BATCH_SIZE;
    return Math.min(Math.max(Number(m[1]), 200), DEFAULT_QUERY_BATCH_SIZE);
  }

  function page(
    cursorId: string,
    cursor: Cursor,
    offset: number,
    size: number,
    version: string,
  ): SimResponse {
    const records = cursor.rows.slice(offset, offset + size);
    const next = offset + records.length;
    const done = next >= cursor.rows.length;
    if (done) cursors.delete(cursorId);
    else cursor.expiresAt = state.clock.now() + CURSOR_TTL_MS;
    return json(200, {
      totalSize: cursor.totalSize,
      done,
      ...(done
        ? {}
        : {
            nextRecordsUrl: `/services/data/v${version}/${cursor.all ? 'queryAll' : 'query'}/${cursorId}-${next}`,
          }),
      records,
    });
  }

  function query(req: SimRequest, version: string, all: boolean): SimResponse {
    const q = req.query.get('q');
    if (q === null || q.trim() === '')
      throw sfError(400, 'MALFORMED_QUERY', 'A query string has to be specified');
    const result = runQuery(state, q, { all });
    if (result.query.count) return json(200, { totalSize: result.totalSize, done: true, records: [] });
    const fields: FieldPath[] = result.query.fields;
    const rows = result.records.map((r) => renderRow(state, r, fields, version));
    const cursorId = state.makeId('01g');
    const cursor: Cursor = {
      rows,
      totalSize: result.totalSize,
      expiresAt: state.clock.now() + CURSOR_TTL_MS,
      all,
    };
    cursors.set(cursorId, cursor);
    return page(cursorId, cursor, 0, batchSize(req), version);
  }

  function queryMore(locator: string, version: string): SimResponse {
    const m = /^([a-zA-Z0-9]{15,18})-(\d+)$/.exec(locator);
    const cursor = m ? cursors.get(m[1] as string) : undefined;
    if (!m || !cursor || cursor.expiresAt <= state.clock.now()) {
      if (m) cursors.delete(m[1] as string);
      throw sfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    }
    return page(m[1] as string, cursor, Number(m[2]), DEFAULT_QUERY_BATCH_SIZE, version);
  }

  // -------------------------------------------------------------------------------------------
  // sObject Collections

  type SaveResult = {
    id?: string;
    success: boolean;
    errors: { statusCode: string; message: string; fields: string[] }[];
  };

  const toSaveErrors = (errors: SfError[]) =>
    errors.map((e) => ({ statusCode: e.errorCode, message: e.message, fields: e.fields ?? [] }));

  function collection(req: SimRequest): SimResponse {
    if (req.method === 'DELETE') {
      const ids = (req.query.get('ids') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (ids.length === 0) throw sfError(400, 'MISSING_ARGUMENT', 'ids parameter is required');
      if (ids.length > MAX_COLLECTION_RECORDS) throw tooMany();
      const allOrNone = req.query.get('allOrNone') === 'true';
      return json(
        200,
        applyAll(
          allOrNone,
          ids,
          (raw) => {
            const id = normalizeId(raw);
            if (!id) throw sfError(400, 'MALFORMED_ID', `malformed id ${raw}`, []);
            const rec = state.find(id);
            if (!rec) throw sfError(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', []);
            if (rec.deleted) throw sfError(400, 'ENTITY_IS_DELETED', 'entity is deleted', []);
            state.remove(rec.object.name, id, 'api');
            return id;
          },
          (raw) => raw,
        ),
      );
    }
    const b = body(req);
    const records = b.records;
    if (!Array.isArray(records)) throw sfError(400, 'JSON_PARSER_ERROR', 'records is required');
    if (records.length > MAX_COLLECTION_RECORDS) throw tooMany();
    const allOrNone = b.allOrNone === true;
    const insert = req.method === 'POST';
    return json(
      200,
      applyAll(
        allOrNone,
        records as unknown[],
        (item) => {
          if (typeof item !== 'object' || item === null)
            throw sfError(400, 'JSON_PARSER_ERROR', 'record must be an object', []);
          const { attributes: attrs, id, Id, ...fields } = item as Record<string, unknown>;
          const type = (attrs as { type?: unknown } | undefined)?.type;
          if (typeof type !== 'string') {
            throw sfError(
              400,
              'INVALID_TYPE',
              'When the request includes an sObject, the type attribute is required',
              [],
            );
          }
          const obj = state.objects().find((o) => o.name.toLowerCase() === type.toLowerCase());
          if (!obj) throw sfError(400, 'INVALID_TYPE', `sObject type '${type}' is not supported.`, []);
          const given = id ?? Id;
          if (insert) {
            if (given !== undefined)
              throw sfError(400, 'INVALID_FIELD', 'cannot specify Id in an insert call', ['Id']);
            return state.create(obj.name, fields, 'api').id;
          }
          const norm = typeof given === 'string' ? normalizeId(given) : undefined;
          if (given === undefined)
            throw sfError(400, 'MISSING_ARGUMENT', 'Id not specified in an update call', []);
          if (!norm) throw sfError(400, 'MALFORMED_ID', `malformed id ${String(given)}`, []);
          const rec = state.find(norm);
          if (!rec || rec.object !== obj)
            throw sfError(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', []);
          if (rec.deleted) throw sfError(400, 'ENTITY_IS_DELETED', 'entity is deleted', []);
          return state.update(obj.name, norm, fields, 'api').id;
        },
        (item) => {
          if (insert || typeof item !== 'object' || item === null) return undefined;
          const r = item as Record<string, unknown>;
          const id = r.id ?? r.Id;
          return typeof id === 'string' ? id : undefined;
        },
      ),
    );
  }

  const tooMany = () =>
    sfError(
      400,
      'EXCEEDED_ID_LIMIT',
      `record limit reached. cannot submit more than ${MAX_COLLECTION_RECORDS} records into this call`,
    );

  /**
   * Apply each item in its own transaction; with allOrNone, in one outer transaction that is
   * rolled back if any item failed (the others then report ALL_OR_NONE_OPERATION_ROLLED_BACK).
   * `idOf` names the record an item targets (updates, deletes) for its failure result.
   */
  function applyAll<T>(
    allOrNone: boolean,
    items: T[],
    run: (item: T) => string,
    idOf: (item: T) => string | undefined,
  ): SaveResult[] {
    const withId = (item: T) => {
      const id = idOf(item);
      return id ? { id } : {};
    };
    const attempt = (): SaveResult[] =>
      items.map((item) => {
        try {
          return { id: state.transaction(() => run(item)), success: true, errors: [] };
        } catch (err) {
          if (!(err instanceof SalesforceApiError)) throw err;
          return { ...withId(item), success: false, errors: toSaveErrors(err.errors) };
        }
      });
    if (!allOrNone) return attempt();
    let results: SaveResult[] = [];
    const failed = new Error('rolled back');
    try {
      state.transaction(() => {
        results = attempt();
        if (results.some((r) => !r.success)) throw failed;
      });
    } catch (err) {
      if (err !== failed) throw err;
      return results.map((r, i) =>
        r.success
          ? {
              ...withId(items[i] as T),
              success: false,
              errors: [
                {
                  statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
                  message:
                    'Record rolled back because not all records were valid and the request was using AllOrNone header',
                  fields: [],
                },
              ],
            }
          : r,
      );
    }
    return results;
  }

  function retrieveMany(obj: ObjectDef, req: SimRequest, version: string): SimResponse {
    let ids: string[];
    let fieldsRaw: string | null;
    if (req.method === 'GET') {
      ids = (req.query.get('ids') ?? '').split(',').filter((s) => s !== '');
      fieldsRaw = req.query.get('fields');
    } else {
      const b = body(req);
      ids = Array.isArray(b.ids) ? b.ids.map(String) : [];
      fieldsRaw = Array.isArray(b.fields) ? b.fields.map(String).join(',') : null;
    }
    if (ids.length === 0) throw sfError(400, 'MISSING_ARGUMENT', 'ids parameter is required');
    if (fieldsRaw === null || fieldsRaw === '')
      throw sfError(400, 'MISSING_ARGUMENT', 'fields parameter is required');
    if (ids.length > 2000) throw sfError(400, 'EXCEEDED_ID_LIMIT', 'Cannot retrieve more than 2000 records');
    const fields = fieldsParam(obj, fieldsRaw);
    return json(
      200,
      ids.map((raw) => {
        const id = normalizeId(raw);
        const rec = id ? state.find(id) : undefined;
        return rec && !rec.deleted && rec.object === obj ? renderRecord(rec, fields, version) : null;
      }),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Bulk API 2.0

  function jobs(req: SimRequest, kind: 'query' | 'ingest', p: string[], version: string): SimResponse {
    const method = req.method;
    const [id, sub] = p;
    if (p.length === 0) {
      if (method === 'POST')
        return kind === 'query' ? bulk.createQuery(req.body, version) : bulk.createIngest(req.body, version);
      if (method === 'GET') return bulk.list(kind);
      throw methodNotAllowed(method, ['GET', 'POST']);
    }
    if (p.length === 1 && id) {
      if (method === 'GET') return kind === 'query' ? bulk.getQuery(id) : bulk.getIngest(id);
      if (method === 'PATCH')
        return kind === 'query' ? bulk.patchQuery(id, req.body) : bulk.patchIngest(id, req.body);
      if (method === 'DELETE') return bulk.deleteJob(id, kind);
      throw methodNotAllowed(method, ['GET', 'PATCH', 'DELETE']);
    }
    if (p.length === 2 && id && kind === 'query' && sub === 'results') {
      if (method !== 'GET') throw methodNotAllowed(method, ['GET']);
      return bulk.queryResults(id, req.query);
    }
    if (p.length === 2 && id && kind === 'ingest') {
      if (sub === 'batches') {
        if (method !== 'PUT') throw methodNotAllowed(method, ['PUT']);
        return bulk.upload(id, req.rawBody);
      }
      if (sub === 'successfulResults' || sub === 'failedResults' || sub === 'unprocessedrecords') {
        if (method !== 'GET') throw methodNotAllowed(method, ['GET']);
        return bulk.ingestResults(id, sub);
      }
    }
    throw notFound();
  }

  const server = await startHttpServer({
    handler: handle,
    faults,
    log: requestLog,
    clock: state.clock,
    rateLimitResponse: () => json(403, [LIMIT_EXCEEDED], { 'Sforce-Limit-Info': usage.header() }),
  });
  return { ...server, faults, requestLog, usage, oauth, bulk };
}
