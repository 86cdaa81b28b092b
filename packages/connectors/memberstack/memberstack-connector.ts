/**
 * Memberstack as a sync side (a TableConnector) over the Admin REST API. Tables:
 * - `members`: the app's members (see memberstack-values.ts for their fields);
 * - `plans` (read-only): the plans members are connected to (the Admin API lists no plans of its
 *   own: they are the plan connections' plans, with their names and types).
 *
 * - read: the Admin API lists members by cursor (`after` = the last page's `endCursor`, `limit` up
 *   to 100, in order of creation) and has no modified-since filter. Changes are found by a full pass
 *   compared with the last read: each pass pages every member, hashes each member's canonical
 *   fields and compares the hash with the one the cursor keeps for its id; new or changed members
 *   are returned, unchanged ones are not. An edit is never missed: any change of any value changes
 *   the hash, and a member changed after its page was read differs at the next pass. Members made
 *   during a pass come at its end (they are the newest).
 * - deletes: each cursor entry carries the parity of the pass that last saw it. At the end of a pass
 *   the ids it did not see are read by id: still there, they are returned if changed; gone, they
 *   are `deletedIds`. No false delete.
 * - the cursor is committed by the runtime only after a page is applied; it holds Memberstack's
 *   `endCursor` in the pass, the pass's parity and the packed id -> hash map (deflated).
 * - write: one member per request (the Admin API has no batch write). `customFields` and `metaData`
 *   are sent whole (the member's current ones with the written keys changed), so no other key is
 *   touched whether Memberstack merges or replaces them.
 * - conflicts: Memberstack has no conditional update. Right before an update or delete the member
 *   is read by id and compared with `expected`; a member changed since Lockstep read it (or gone)
 *   answers `version_conflict` with its current values and is not written.
 * - email: a member signs in with it, so a change is written only once it has stayed the same for
 *   `emailStableMs` (60 s by default): a newer email edit is not written yet, the member's other
 *   fields are, and once the batch is done the write fails as a whole with a retryable error (the
 *   queue runs the chunk again later; the writes that landed are answered again from their
 *   idempotency keys). An email is sent only when it changes, never with another field's update,
 *   and read back after writing: a write Memberstack did not keep fails.
 * - creates: Memberstack needs a password; a random one is set (members sign in with a
 *   passwordless link or reset it). A create whose email another member holds answers `existingId`
 *   (that member, found by email) so the runtime links the two; creates and updates are remembered
 *   per idempotency key, so a retried chunk does not write twice.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type CanonicalValue,
  hashRecord,
  type JsonValue,
  normalizeValue,
  type RecordData,
  valuesEqual,
} from '@lockstep/engine';
import {
  type Capabilities,
  ConnectorError,
  type ReadPage,
  type TableConnector,
  type WriteRequest,
  type WriteResult,
} from '../sdk/connector';
import {
  createMemberstackClient,
  getMember,
  listMembers,
  MEMBERSTACK_MAX_PAGE_SIZE,
  MEMBERSTACK_RATE_LIMIT,
  type MemberstackClient,
  type MemberstackClientOptions,
  type MemberstackMember,
  memberstackUserMessage,
} from './memberstack-api';
import {
  customFromCanonical,
  FULL_NAME,
  FULL_NAME_KEYS,
  type MemberstackPlan,
  memberFieldRef,
  memberToRecord,
  metaFromCanonical,
  metaTypeOf,
  plansOf,
  planToRecord,
  splitFullName,
} from './memberstack-values';

export const MEMBERSTACK_BATCH_SIZE = 25;
/** Page requests one read() makes at most while a pass finds few changes (then it returns). */
export const MEMBERSTACK_MAX_REQUESTS_PER_READ = 20;
/** Idempotency keys of landed writes a connector remembers. */
export const MEMBERSTACK_REMEMBERED_WRITES = 20_000;
/** How long an email change must stay the same before it is written. */
export const MEMBERSTACK_EMAIL_STABLE_MS = 60_000;

export const MEMBERSTACK_CAPABILITIES: Capabilities = {
  batchSize: MEMBERSTACK_BATCH_SIZE,
  incrementalRead: true,
  // Deletes are reported as events: ids known to the cursor that Memberstack no longer has.
  deleteDetection: 'events',
  webhooks: true,
  rateLimit: MEMBERSTACK_RATE_LIMIT,
};

export type MemberstackTable = 'members' | 'plans';

export function parseTable(tableRemoteId: string): MemberstackTable {
  const t = tableRemoteId.trim();
  if (t === 'members' || t === 'plans') return t;
  throw new ConnectorError(
    'not_found',
    `no Memberstack table ${tableRemoteId}`,
    'This Memberstack table does not exist (Memberstack has members and plans).',
  );
}

// ---------------------------------------------------------------------------------------------
// Cursor: the position in a pass and what the last pass saw (id -> hash, pass parity).

type Known = Map<string, { h: string; p: 0 | 1 }>;
type ReadCursor = {
  v: 1;
  /** The parity of the pass under way. */
  p: 0 | 1;
  /** Memberstack's `endCursor` within the pass (null: from the start). */
  c: string | null;
  /** The first pass: every record is returned. */
  s?: true;
  /** Packed known ids, hashes and parities. */
  k: string;
};

export function packKnown(known: Known): string {
  const lines = [...known].map(([id, e]) => `${id} ${e.h} ${e.p}`).join('\n');
  return deflateRawSync(Buffer.from(lines)).toString('base64url');
}
export function unpackKnown(packed: string | undefined): Known {
  const out: Known = new Map();
  if (!packed) return out;
  for (const line of inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8').split('\n')) {
    const [id, h, p] = line.split(' ');
    if (id && h) out.set(id, { h, p: p === '1' ? 1 : 0 });
  }
  return out;
}
export const encodeCursor = (c: ReadCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
/** An unreadable cursor means a full rescan. */
export function decodeCursor(s: string | null): ReadCursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ReadCursor;
    if (c.v === 1 && (c.p === 0 || c.p === 1) && typeof c.k === 'string') return c;
  } catch {
    // fall through
  }
  return null;
}

/** A record's fingerprint: its canonical fields' hash (what a change of any value changes). */
export function fingerprint(record: RecordData): string {
  return hashRecord(record.fields).slice(0, 16);
}

/** A random password for a member made by Lockstep (Memberstack requires one). */
export function randomPassword(): string {
  return `Ls-${randomBytes(18).toString('base64url')}-9a`;
}

// ---------------------------------------------------------------------------------------------
// Connector

export type MemberstackConnectorOptions = MemberstackClientOptions & {
  /** Members per page (Memberstack's 100; lower in tests). */
  queryPageSize?: number;
  /** How long an email change must stay the same before it is written (60 s; 0 writes at once). */
  emailStableMs?: number;
  now?: () => number;
};

export type MemberstackConnector = TableConnector & {
  readRecords(tableRemoteId: string, ids: string[]): Promise<RecordData[]>;
  client: MemberstackClient;
};

type Update = Extract<WriteRequest, { kind: 'update' }>;
type Create = Extract<WriteRequest, { kind: 'create' }>;
type Delete = Extract<WriteRequest, { kind: 'delete' }>;

/** What a member update sends: the changed parts of the member only. */
type Patch = {
  email?: string;
  customFields?: Record<string, unknown>;
  metaData?: Record<string, unknown>;
};

export function createMemberstackConnector(options: MemberstackConnectorOptions): MemberstackConnector {
  const client = createMemberstackClient(options);
  const now = options.now ?? Date.now;
  const emailStableMs = Math.max(0, options.emailStableMs ?? MEMBERSTACK_EMAIL_STABLE_MS);
  const pageLimit = Math.max(
    1,
    Math.min(options.queryPageSize ?? MEMBERSTACK_MAX_PAGE_SIZE, MEMBERSTACK_MAX_PAGE_SIZE),
  );
  /**
   * Writes that landed, by idempotency key: a retried chunk is answered, not written again. The
   * newest keys are kept (a retry comes within minutes, not after thousands more writes).
   */
  const landed = new Map<string, string>();
  const remember = (key: string, id: string) => {
    landed.set(key, id);
    if (landed.size > MEMBERSTACK_REMEMBERED_WRITES) landed.delete(landed.keys().next().value as string);
  };
  /** Email changes waiting to be stable: member id -> the email asked for and since when. */
  const pendingEmails = new Map<string, { email: string; since: number }>();

  // -------------------------------------------------------------------------------------------
  // Reads

  async function fetchByIds(ids: string[]): Promise<MemberstackMember[]> {
    const out: MemberstackMember[] = [];
    for (const id of new Set(ids)) {
      // Only member ids: an email in an id would read another member.
      if (!/^mem_[A-Za-z0-9_-]+$/.test(id)) continue;
      const m = await getMember(client, id);
      if (m && m.id === id) out.push(m);
    }
    return out;
  }

  async function readMembers(cursor: string | null, want: number): Promise<ReadPage> {
    const given = decodeCursor(cursor);
    const c: ReadCursor = given ?? { v: 1, p: 1, c: null, s: true, k: '' };
    const known = unpackKnown(c.k);
    const records: RecordData[] = [];
    let after = c.c;
    let ended = false;
    let requests = 0;
    while (records.length < want && requests < MEMBERSTACK_MAX_REQUESTS_PER_READ) {
      const limit = Math.min(pageLimit, Math.max(1, want - records.length));
      let got: Awaited<ReturnType<typeof listMembers>>;
      try {
        got = await listMembers(client, after, limit);
      } catch (error) {
        // A position Memberstack refuses: the pass goes on from the start (members seen already are
        // compared again and not returned unless changed).
        if (after && error instanceof ConnectorError && error.code === 'validation') {
          after = null;
          requests++;
          continue;
        }
        throw error;
      }
      requests++;
      for (const m of got.members) {
        const record = memberToRecord(m);
        const h = fingerprint(record);
        const before = known.get(record.id);
        if (c.s || !before || before.h !== h) records.push(record);
        known.set(record.id, { h, p: c.p });
      }
      if (!got.hasMore) {
        ended = true;
        break;
      }
      after = got.next;
    }
    const deletedIds: string[] = [];
    if (ended) {
      // Ids the pass did not see: still in Memberstack (returned now if changed) or gone.
      const missing = [...known].filter(([, e]) => e.p !== c.p).map(([id]) => id);
      if (missing.length > 0) {
        const present = new Set<string>();
        for (const m of await fetchByIds(missing)) {
          const record = memberToRecord(m);
          present.add(record.id);
          const h = fingerprint(record);
          const before = known.get(record.id);
          if (!before || before.h !== h) records.push(record);
          known.set(record.id, { h, p: c.p });
        }
        for (const id of missing) {
          if (present.has(id)) continue;
          known.delete(id);
          deletedIds.push(id);
        }
      }
    }
    const next: ReadCursor = ended
      ? { v: 1, p: c.p === 1 ? 0 : 1, c: null, k: packKnown(known) }
      : { ...c, c: after, k: packKnown(known) };
    return {
      records,
      deletedIds,
      nextCursor: encodeCursor(next),
      hasMore: !ended,
      // Absence is evidence only when this one page holds the whole table (a first scan in one page).
      scanComplete: given === null && ended && requests === 1,
    };
  }

  /** Every plan members are connected to: one pass over all members. */
  async function allPlans(): Promise<Map<string, MemberstackPlan>> {
    const plans = new Map<string, MemberstackPlan>();
    let after: string | null = null;
    for (let i = 0; i < 100_000; i++) {
      const got = await listMembers(client, after, MEMBERSTACK_MAX_PAGE_SIZE);
      plansOf(got.members, plans);
      if (!got.hasMore) break;
      after = got.next;
    }
    return plans;
  }

  /** Plans: one page, the whole table; changed and gone plans against the hashes of the last read. */
  async function readPlans(cursor: string | null): Promise<ReadPage> {
    const given = decodeCursor(cursor);
    const known = unpackKnown(given?.k);
    const records: RecordData[] = [];
    const seen: Known = new Map();
    for (const plan of (await allPlans()).values()) {
      const record = planToRecord(plan);
      const h = fingerprint(record);
      if (!given || known.get(record.id)?.h !== h) records.push(record);
      seen.set(record.id, { h, p: 0 });
    }
    const deletedIds = given ? [...known.keys()].filter((id) => !seen.has(id)) : [];
    return {
      records,
      deletedIds,
      nextCursor: encodeCursor({ v: 1, p: 0, c: null, k: packKnown(seen) }),
      hasMore: false,
      scanComplete: given === null,
    };
  }

  async function read(tableId: string, cursor: string | null, opts: { pageSize: number }): Promise<ReadPage> {
    const table = parseTable(tableId);
    if (table === 'plans') return readPlans(cursor);
    return readMembers(cursor, Math.max(1, opts.pageSize));
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  function failure(err: unknown): Extract<WriteResult, { ok: false }> {
    const e =
      err instanceof ConnectorError
        ? err
        : new ConnectorError('transient', String(err), memberstackUserMessage('transient'));
    return { ok: false, error: { code: e.code, message: e.message, userFacingMessage: e.userFacingMessage } };
  }
  const invalid = (message: string) =>
    new ConnectorError('validation', message, memberstackUserMessage('validation', message));
  const notFound = (id: string) =>
    new ConnectorError(
      'not_found',
      `Memberstack member ${id} not found`,
      memberstackUserMessage('not_found'),
    );

  function conflict(id: string, current: RecordData | null): WriteResult {
    return {
      ok: false,
      error: {
        code: 'version_conflict',
        message: `Memberstack member ${id} changed since it was read`,
        userFacingMessage: 'The Memberstack member changed at the same time; Lockstep compares it again.',
      },
      current,
    };
  }

  /** Whether the member no longer holds what Lockstep read in an expected field. */
  function changed(
    live: RecordData,
    member: MemberstackMember,
    expected: Record<string, CanonicalValue> | undefined,
  ): boolean {
    for (const [name, want] of Object.entries(expected ?? {})) {
      const ref = memberFieldRef(name);
      if (!ref) continue;
      const have = live.fields[name] ?? null;
      if (valuesEqual(want ?? null, have)) continue;
      // The same value in the form of this field's type (a number read as text, an email's case).
      const type =
        ref.kind === 'email'
          ? 'email'
          : ref.kind === 'plans'
            ? 'multi_select'
            : ref.kind === 'createdAt'
              ? 'datetime'
              : ref.kind === 'custom' || ref.kind === 'fullName'
                ? 'text'
                : (metaTypeOf(member.metaData?.[ref.key]) ?? 'text');
      const norm = normalizeValue(type, want ?? null);
      if (!norm.ok || !valuesEqual(norm.value, have)) return true;
    }
    return false;
  }

  /** Runs one item; an error of that item alone (a bad value, a missing member) is its result. */
  async function item(run: () => Promise<WriteResult>): Promise<WriteResult> {
    try {
      return await run();
    } catch (err) {
      // Rate limits past the retries, outages and refused credentials concern the whole run.
      if (err instanceof ConnectorError && (err.code === 'validation' || err.code === 'not_found'))
        return failure(err);
      throw err;
    }
  }

  /**
   * The written fields as Memberstack's parts, against the member as it is (`null` for a create):
   * custom fields and metadata whole, with the written keys changed; read-only and unknown fields
   * dropped; the email apart.
   */
  function split(
    fields: Record<string, CanonicalValue>,
    member: MemberstackMember | null,
  ): { email: string | null | undefined; patch: Patch } {
    let email: string | null | undefined;
    const custom: Record<string, unknown> = { ...(member?.customFields ?? {}) };
    const meta: Record<string, unknown> = { ...(member?.metaData ?? {}) };
    let customChanged = false;
    let metaChanged = false;
    // The full name first: a first or last name written with it is the more precise value.
    const entries = Object.entries(fields);
    const ordered = [
      ...entries.filter(([n]) => n === FULL_NAME),
      ...entries.filter(([n]) => n !== FULL_NAME),
    ];
    for (const [name, raw] of ordered) {
      const ref = memberFieldRef(name);
      if (!ref || ref.kind === 'plans' || ref.kind === 'createdAt') continue;
      if (ref.kind === 'email') {
        const n = normalizeValue('email', raw ?? null);
        if (!n.ok) throw invalid(`Email: ${n.problem.message}`);
        email = n.value as string | null;
        continue;
      }
      if (ref.kind === 'fullName') {
        // The two custom fields it is made of.
        const n = normalizeValue('text', raw ?? null);
        if (!n.ok) throw invalid(`Full name: ${n.problem.message}`);
        splitFullName(n.value).forEach((part, i) => {
          const key = FULL_NAME_KEYS[i] as string;
          if ((custom[key] ?? '') !== part) customChanged = true;
          custom[key] = part;
        });
        continue;
      }
      if (ref.kind === 'custom') {
        const out = customFromCanonical(raw ?? null);
        if ('problem' in out) throw invalid(`${ref.key}: ${out.problem}`);
        if ((custom[ref.key] ?? '') !== out.value) customChanged = true;
        custom[ref.key] = out.value;
        continue;
      }
      const out = metaFromCanonical(raw ?? null, member?.metaData?.[ref.key]);
      if ('problem' in out) throw invalid(`${ref.key}: ${out.problem}`);
      const was = member?.metaData?.[ref.key];
      if (JSON.stringify(was ?? null) !== JSON.stringify(out.value)) metaChanged = true;
      meta[ref.key] = out.value as JsonValue;
    }
    const patch: Patch = {};
    if (customChanged) patch.customFields = custom;
    if (metaChanged) patch.metaData = meta;
    return { email, patch };
  }

  async function patchMember(id: string, body: Patch): Promise<MemberstackMember | null> {
    const res = await client.request<{ data?: MemberstackMember | null }>({
      method: 'PATCH',
      path: `/members/${encodeURIComponent(id)}`,
      body,
    });
    return res.body?.data ?? null;
  }

  async function create(r: Create): Promise<WriteResult> {
    const { email, patch } = split(r.fields, null);
    if (!email) throw invalid('a member needs an email');
    let made: MemberstackMember | null = null;
    try {
      const res = await client.request<{ data?: MemberstackMember | null }>({
        method: 'POST',
        path: '/members',
        body: {
          email,
          password: randomPassword(),
          ...(patch.customFields ? { customFields: patch.customFields } : {}),
          ...(patch.metaData ? { metaData: patch.metaData } : {}),
        },
      });
      made = res.body?.data ?? null;
    } catch (error) {
      // The email is another member's: that member, so the runtime links the two.
      if (error instanceof ConnectorError && error.code === 'validation') {
        const existing = await getMember(client, email);
        if (existing?.id && existing.auth?.email?.toLowerCase() === email.toLowerCase())
          return {
            ...failure(
              new ConnectorError(
                'validation',
                `Memberstack: ${email} is taken by ${existing.id}`,
                `Another Memberstack member already has the email ${email}.`,
              ),
            ),
            existingId: existing.id,
            current: memberToRecord(existing),
          };
      }
      throw error;
    }
    if (!made?.id) throw new ConnectorError('transient', 'Memberstack made the member without an id');
    remember(r.idempotencyKey, made.id);
    return { ok: true, remoteId: made.id, postImage: memberToRecord(made) };
  }

  /** An email change: whether it may be written now (stable long enough), else how long to wait. */
  function emailReady(id: string, email: string): number {
    if (emailStableMs === 0) return 0;
    const at = now();
    const pending = pendingEmails.get(id);
    if (!pending || pending.email !== email) {
      pendingEmails.set(id, { email, since: at });
      return emailStableMs;
    }
    return Math.max(0, pending.since + emailStableMs - at);
  }

  type Deferred = { id: string; waitMs: number };

  async function update(
    r: Update | (Create & { remoteId: string }),
    member: MemberstackMember,
    deferred: Deferred[],
  ): Promise<WriteResult> {
    const { email, patch } = split(r.fields, member);
    const currentEmail = (member.auth?.email ?? '').toLowerCase();
    let emailNow = false;
    if (email === null) throw invalid('a member needs an email; it cannot be emptied');
    if (email !== undefined && email.toLowerCase() !== currentEmail) {
      const wait = emailReady(member.id, email);
      if (wait > 0) deferred.push({ id: member.id, waitMs: wait });
      else emailNow = true;
    } else pendingEmails.delete(member.id);
    let after: MemberstackMember | null = member;
    // The other fields first, without the email: never sent as a side effect of their update.
    if (patch.customFields || patch.metaData) after = (await patchMember(member.id, patch)) ?? after;
    if (emailNow && email) {
      await patchMember(member.id, { email });
      // Read back: the member signs in with it, so the write is confirmed, not assumed.
      after = await getMember(client, member.id);
      if (!after) throw notFound(member.id);
      if ((after.auth?.email ?? '').toLowerCase() !== email.toLowerCase())
        throw new ConnectorError(
          'transient',
          `Memberstack kept ${after.auth?.email ?? 'no email'} for ${member.id}, not ${email}`,
          'Memberstack did not keep the new email; Lockstep will try again.',
        );
      pendingEmails.delete(member.id);
    }
    if (!deferred.some((d) => d.id === member.id)) remember(r.idempotencyKey, member.id);
    return { ok: true, remoteId: member.id, postImage: after ? memberToRecord(after) : null };
  }

  async function remove(id: string): Promise<void> {
    try {
      await client.request({ method: 'DELETE', path: `/members/${encodeURIComponent(id)}` });
    } catch (e) {
      // Already gone: the delete has happened (a replay, or deleted in Memberstack meanwhile).
      if (!(e instanceof ConnectorError && e.code === 'not_found')) throw e;
    }
  }

  async function writeMembers(requests: WriteRequest[]): Promise<WriteResult[]> {
    const results: WriteResult[] = [];
    const deferred: Deferred[] = [];
    for (const r of requests) {
      const known = landed.get(r.idempotencyKey);
      if (r.kind === 'create') {
        if (known !== undefined) {
          // A create sent again (its answer lost): the member it made gets the fields.
          const member = await getMember(client, known);
          results.push(
            member
              ? await item(() => update({ ...r, remoteId: known }, member, deferred))
              : failure(notFound(known)),
          );
          continue;
        }
        results.push(await item(() => create(r)));
        continue;
      }
      if (r.kind === 'update') {
        const member = await getMember(client, r.remoteId);
        if (!member) {
          results.push(r.expected ? conflict(r.remoteId, null) : failure(notFound(r.remoteId)));
          continue;
        }
        const live = memberToRecord(member);
        // Written already (a retried chunk): answered with the member as it is.
        if (known === r.remoteId) {
          results.push({ ok: true, remoteId: r.remoteId, postImage: live });
          continue;
        }
        if (changed(live, member, r.expected)) {
          results.push(conflict(r.remoteId, live));
          continue;
        }
        results.push(await item(() => update(r, member, deferred)));
        continue;
      }
      results.push(await item(() => deleteOne(r)));
    }
    if (deferred.length > 0) {
      // The email edits are too new to write: the batch is retried once they have settled (what
      // landed meanwhile is answered from its idempotency key).
      const waitMs = Math.max(...deferred.map((d) => d.waitMs));
      throw new ConnectorError(
        'transient',
        `Memberstack email change of ${deferred.map((d) => d.id).join(', ')} waits ${waitMs} ms to be stable`,
        `A member's email changed; Memberstack members sign in with it, so Lockstep writes it once it has stayed the same for ${Math.round(emailStableMs / 1000)} seconds.`,
        waitMs,
      );
    }
    return results;
  }

  async function deleteOne(r: Delete): Promise<WriteResult> {
    if (r.expected && Object.keys(r.expected).length > 0) {
      const member = await getMember(client, r.remoteId);
      if (!member) return { ok: true, remoteId: r.remoteId, postImage: null };
      const live = memberToRecord(member);
      if (changed(live, member, r.expected)) return conflict(r.remoteId, live);
    }
    await remove(r.remoteId);
    pendingEmails.delete(r.remoteId);
    return { ok: true, remoteId: r.remoteId, postImage: null };
  }

  async function write(tableId: string, requests: WriteRequest[]): Promise<WriteResult[]> {
    const table = parseTable(tableId);
    if (table === 'plans')
      return requests.map(() =>
        failure(
          new ConnectorError(
            'validation',
            'Memberstack plans are read-only through the Admin API',
            'Memberstack plans cannot be changed by Lockstep: edit them in the Memberstack dashboard.',
          ),
        ),
      );
    return writeMembers(requests);
  }

  return {
    capabilities: MEMBERSTACK_CAPABILITIES,
    client,
    read,
    write,
    async readRecords(tableId, ids) {
      if (ids.length === 0) return [];
      if (parseTable(tableId) === 'plans') {
        const plans = await allPlans();
        return ids.flatMap((id) => {
          const p = plans.get(id);
          return p ? [planToRecord(p)] : [];
        });
      }
      return (await fetchByIds(ids)).map((m) => memberToRecord(m));
    },
  };
}
