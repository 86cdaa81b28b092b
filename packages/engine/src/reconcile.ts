import { convertValue } from './compatibility';
import { type Filter, passesFilter } from './filter';
import { carryOptions, type OptionPair } from './options';
import {
  type CanonicalValue,
  type Direction,
  type FieldSpec,
  otherSide,
  type Problem,
  type RecordData,
  type Side,
} from './types';
import { hashKey, isBlank, normalizeValue, valuesEqual, valuesEqualAcross } from './values';

export type FieldMapping = {
  id: string;
  left: FieldSpec;
  right: FieldSpec;
  direction: Direction;
  owner?: Side | null;
  /** Select options paired across (see options.ts); unpaired ones pair by name. */
  optionPairs?: OptionPair[] | null;
};
export type MassDeletePolicy = { maxCount: number; maxFraction: number; minCountForFraction: number };
export type ReconcilePolicy = {
  conflictWinner: Side;
  /** Hold conflicts for the user instead of applying the winner. */
  conflictReview: boolean;
  /** Deletes wait in the approval queue instead of being written. */
  deleteProtection: boolean;
  massDelete: MassDeletePolicy;
};
export const DEFAULT_MASS_DELETE: MassDeletePolicy = {
  maxCount: 100,
  maxFraction: 0.2,
  minCountForFraction: 10,
};
export type TableMappingSpec = {
  id: string;
  direction: Direction;
  fields: FieldMapping[];
  filter?: Filter | null;
  policy: ReconcilePolicy;
};

/** The shadow of one mapped field: the value each side held when the pair was last in step. */
export type ShadowField = { l: CanonicalValue; r: CanonicalValue };
export type Shadow = Record<string, ShadowField>;
export type Link = {
  id: string;
  leftId: string | null;
  rightId: string | null;
  shadow: Shadow | null;
  version: number;
};

/** What one side reported: changed records (or every record of a full scan), delete events, and whether the scan was complete. */
export type ChangeSet = {
  records: RecordData[];
  deletedIds: string[];
  scanComplete: boolean;
  /**
   * The most of `deletedIds` one transaction of the app deleted, where the app tells (a database's
   * change log does): the mass-delete breaker then weighs each bulk delete on its own, so a backlog of
   * many single deletes (after a crash, say) is not mistaken for one mass delete.
   */
  largestDeleteBatch?: number;
};

export type WriteOp =
  | {
      kind: 'create';
      side: Side;
      linkId: string | null;
      sourceId: string;
      fields: Record<string, CanonicalValue>;
      intended: Shadow;
      idempotencyKey: string;
    }
  | {
      kind: 'update';
      side: Side;
      linkId: string;
      remoteId: string;
      fields: Record<string, CanonicalValue>;
      /**
       * What the target held in each written field when Lockstep last read it (this run's read, or
       * the shadow): a connector that can write conditionally writes only if it still holds that.
       */
      expected: Record<string, CanonicalValue>;
      intended: Shadow;
      idempotencyKey: string;
    }
  | {
      kind: 'delete';
      side: Side;
      linkId: string;
      remoteId: string;
      /** What the record held when last synced (the shadow): a conditional delete spares an edit since. */
      expected?: Record<string, CanonicalValue>;
      idempotencyKey: string;
    };

export type ReconcileResult = {
  operations: WriteOp[];
  /** Shadows that move without a write (false conflicts, accepted one-way edits, first-sync pairs already equal). */
  shadowUpdates: { linkId: string; shadow: Shadow }[];
  heldConflicts: {
    linkId: string;
    fieldMappingId: string;
    left: CanonicalValue;
    right: CanonicalValue;
    shadow: ShadowField | null;
  }[];
  resolvedConflicts: {
    linkId: string;
    fieldMappingId: string;
    winner: Side;
    left: CanonicalValue;
    right: CanonicalValue;
  }[];
  deleteApprovals: { linkId: string; side: Side; remoteId: string; reason: string }[];
  unlinked: string[];
  /**
   * The mass-delete breaker, per side it tripped on: that side's deletes are held in the approval
   * queue (`deleteApprovals`), none written, so the user decides and nothing is lost either way.
   */
  circuitBreakers: { side: Side; wouldDelete: number; linked: number }[];
  problems: Problem[];
  /**
   * Linked-record values that could not be written yet because a linked record has no partner on
   * the other side. The shadow already holds the source value (so it is not read as an edit
   * again); the runtime writes the value once every linked record is synced.
   */
  pendingRelations: PendingRelation[];
  stats: {
    pairs: number;
    unchanged: number;
    echoes: number;
    creates: number;
    updates: number;
    deletes: number;
    conflicts: number;
    falseConflicts: number;
  };
};

export type PendingRelation = {
  fieldMappingId: string;
  /** The side the value comes from. */
  from: Side;
  /** The record holding the value, on the `from` side. */
  sourceId: string;
  /** Linked-record ids of the `from` side, sorted. */
  value: string[];
  /** Ids that have no partner yet. */
  missing: string[];
};

export type ReconcileInput = {
  mapping: TableMappingSpec;
  links: Link[];
  left: ChangeSet;
  right: ChangeSet;
  /** Linked records of this mapping in all (for the mass-delete threshold). */
  totalLinks?: number;
  /** Maps a linked-record id of one side to the other side's id through the target mapping's links. */
  resolveRelation?: (fieldMappingId: string, fromSide: Side, remoteId: string) => string | null;
};

const fieldOf = (fm: FieldMapping, side: Side) => (side === 'left' ? fm.left : fm.right);
const shadowOf = (sf: ShadowField, side: Side) => (side === 'left' ? sf.l : sf.r);
const flows = (d: Direction, from: Side) =>
  d === 'both' || d === (from === 'left' ? 'left_to_right' : 'right_to_left');
const UNREADABLE = Object.freeze({ ok: false as boolean, value: null as CanonicalValue });
/** What an app stores as no value at all (NULL): a required field refuses it. An empty text is a value. */
const blank = (v: CanonicalValue | undefined) => v === null || v === undefined;

/** An operation's idempotency key: a 128-bit hash of what identifies it (53 bits could collide). */
const keyFor = (mappingId: string, linkOrSource: string, version: number, kind: string, side: Side) =>
  hashKey(`${mappingId}|${linkOrSource}|${version}|${kind}|${side}`);

/**
 * Three-way reconcile of one table mapping: for every linked pair and mapped field, compare each
 * side with the shadow and decide — nothing, propagate, false conflict, or conflict (by owner or
 * winner side, or held for review); unlinked records create on the other side; deletes need
 * positive evidence. Pure and deterministic: the same input gives the same plan.
 */
export function reconcile(input: ReconcileInput): ReconcileResult {
  const { mapping } = input;
  const out: ReconcileResult = {
    operations: [],
    shadowUpdates: [],
    heldConflicts: [],
    resolvedConflicts: [],
    deleteApprovals: [],
    unlinked: [],
    circuitBreakers: [],
    problems: [],
    pendingRelations: [],
    stats: {
      pairs: 0,
      unchanged: 0,
      echoes: 0,
      creates: 0,
      updates: 0,
      deletes: 0,
      conflicts: 0,
      falseConflicts: 0,
    },
  };
  // One hash lookup per record and side: an entry is claimed by its link, so unclaimed ones are new.
  type Entry = { record: RecordData; claimed: boolean };
  const index = (list: RecordData[]) => {
    const m = new Map<string, Entry>();
    for (const record of list) m.set(record.id, { record, claimed: false });
    return m;
  };
  const entries = { left: index(input.left.records), right: index(input.right.records) };
  const changes = { left: input.left, right: input.right };
  const deletedIds = { left: new Set(input.left.deletedIds), right: new Set(input.right.deletedIds) };
  const deletedBy = (side: Side, id: string | null, found: boolean): boolean => {
    if (id === null) return false;
    if (deletedIds[side].size > 0 && deletedIds[side].has(id)) return true;
    // Absence is evidence only after a complete scan.
    return changes[side].scanComplete && !found;
  };

  // Reads a side's value of one field, normalised; a value of the wrong type becomes a problem.
  // The normaliser's own result is returned (no wrapper per field read: a full scan reads millions).
  const readField = (
    side: Side,
    record: RecordData,
    fm: FieldMapping,
  ): { ok: boolean; value: CanonicalValue } => {
    const spec = fieldOf(fm, side);
    const n = normalizeValue(spec.type, record.fields[spec.id] ?? null, spec.options);
    if (n.ok) return n;
    out.problems.push({ ...n.problem, side, recordId: record.id, fieldId: spec.id });
    return UNREADABLE;
  };

  // Converts a value for the other side, mapping linked-record ids. A relation whose linked record
  // has no partner yet is `pending` (never write a dangling id); the caller decides what waits.
  const convertFor = (
    from: Side,
    fm: FieldMapping,
    value: CanonicalValue,
    recordId: string,
  ): { ok: boolean; value: CanonicalValue; pending?: PendingRelation } => {
    const to = otherSide(from);
    if (fm.left.type === 'relations' && Array.isArray(value)) {
      const mapped: string[] = [];
      const missing: string[] = [];
      for (const id of value as string[]) {
        const target = input.resolveRelation?.(fm.id, from, id) ?? null;
        if (target === null) missing.push(id);
        else mapped.push(target);
      }
      if (missing.length > 0) {
        const pending = {
          fieldMappingId: fm.id,
          from,
          sourceId: recordId,
          value: value as string[],
          missing,
        };
        return { ok: false, value: null, pending };
      }
      return { ok: true, value: mapped.length ? [...new Set(mapped)].sort() : null };
    }
    const carried = carryOptions(value, from, fm);
    const c = carried.ok ? convertValue(carried.value, fieldOf(fm, from), fieldOf(fm, to)) : carried;
    if (!c.ok) {
      out.problems.push({ ...c.problem, side: from, recordId, fieldId: fieldOf(fm, from).id });
      return { ok: false, value: null };
    }
    return { ok: true, value: c.value };
  };
  // A field the other app requires, empty at the source: the write is held back and reported.
  const requiredMissing = (from: Side, fm: FieldMapping, recordId: string) => {
    const target = fieldOf(fm, otherSide(from));
    out.problems.push({
      code: 'required_missing',
      side: from,
      recordId,
      fieldId: fieldOf(fm, from).id,
      message: `${fieldOf(fm, from).name} is empty, and ${target.name} on the other side requires a value.`,
    });
  };
  // A relation that waits: reported once, as a problem (previews show it) and as a pending write.
  const waitFor = (p: PendingRelation, fm: FieldMapping) => {
    out.pendingRelations.push(p);
    out.problems.push({
      code: 'relation_pending',
      side: p.from,
      recordId: p.sourceId,
      fieldId: fieldOf(fm, p.from).id,
      message: `Waits for linked record${p.missing.length > 1 ? 's' : ''} ${p.missing.join(', ')} to be synced first.`,
    });
  };

  const writable = (fm: FieldMapping, from: Side) =>
    flows(mapping.direction, from) && flows(fm.direction, from) && !fieldOf(fm, otherSide(from)).readOnly;

  const pendingDeletes: { side: Side; link: Link; remoteId: string }[] = [];

  // 1. Linked pairs touched by this run (the runtime passes the links of the records it read).
  for (const link of input.links) {
    const le = link.leftId ? entries.left.get(link.leftId) : undefined;
    const re = link.rightId ? entries.right.get(link.rightId) : undefined;
    if (le) le.claimed = true;
    if (re) re.claimed = true;
    const L = le?.record ?? null;
    const R = re?.record ?? null;
    const goneL = deletedBy('left', link.leftId, le !== undefined);
    const goneR = deletedBy('right', link.rightId, re !== undefined);
    if (!L && !R && !goneL && !goneR) continue;
    out.stats.pairs++;
    // A link whose other half was never created (a failed or interrupted create) creates it now.
    if (!link.leftId && R) {
      recreate('right', R, link);
      continue;
    }
    if (!link.rightId && L) {
      recreate('left', L, link);
      continue;
    }
    if (goneL && goneR) {
      out.unlinked.push(link.id);
      continue;
    }
    if (goneL || goneR) {
      const gone: Side = goneL ? 'left' : 'right';
      const survivor = otherSide(gone);
      const S = survivor === 'left' ? L : R;
      const survivorId = (survivor === 'left' ? link.leftId : link.rightId) as string;
      const editedSince =
        S !== null &&
        (link.shadow === null ||
          mapping.fields.some((fm) => {
            const v = readField(survivor, S, fm);
            const sf = link.shadow?.[fm.id];
            return v.ok && sf !== undefined && !valuesEqual(v.value, shadowOf(sf, survivor));
          }));
      if (editedSince || !flows(mapping.direction, gone)) {
        // Delete on one side and edit on the other (or a one-way mirror): the record comes back.
        if (S) recreate(survivor, S, link);
        else
          out.problems.push({
            code: 'shadow_missing',
            side: survivor,
            recordId: survivorId,
            message: 'Deleted on one side; the other side must be read again to decide.',
          });
        if (editedSince) out.stats.conflicts++;
      } else {
        pendingDeletes.push({ side: survivor, link, remoteId: survivorId });
      }
      continue;
    }
    if (
      mapping.filter &&
      ((L && !passesFilter(mapping.filter, 'left', L)) || (R && !passesFilter(mapping.filter, 'right', R)))
    ) {
      out.stats.unchanged++;
      continue; // Outside the filter: left alone, neither written nor deleted.
    }
    reconcilePair(link, L, R);
  }

  // The state of one pair while its fields are compared. A plain object and functions made once per
  // call, not closures made per pair: under tsx (keepNames) every closure also cost a defineProperty,
  // and closures were a fifth of a full-table change's time.
  type PairState = {
    link: Link;
    shadow: Shadow | null;
    moved: boolean;
    writes: Record<Side, Record<string, CanonicalValue>> | null;
    /** The target's values the writes were decided on (see WriteOp `expected`). */
    expected: Record<Side, Record<string, CanonicalValue>> | null;
  };
  // Allocated only when something changes: most pairs of a full scan are unchanged.
  function nextShadow(p: PairState): Shadow {
    if (p.shadow === null) p.shadow = { ...(p.link.shadow ?? {}) };
    return p.shadow;
  }
  function push(p: PairState, fm: FieldMapping, from: Side, lv: CanonicalValue, rv: CanonicalValue): boolean {
    const link = p.link;
    const to = otherSide(from);
    const source = from === 'left' ? lv : rv;
    const current = to === 'left' ? lv : rv;
    const c = convertFor(from, fm, source, (from === 'left' ? link.leftId : link.rightId) ?? link.id);
    if (c.pending) {
      // The shadow takes the source value now, so the runtime alone writes it when it can.
      waitFor(c.pending, fm);
      nextShadow(p)[fm.id] = from === 'left' ? { l: source, r: current } : { l: current, r: source };
      p.moved = true;
      return true;
    }
    if (!c.ok) return false;
    if (blank(c.value) && fieldOf(fm, to).options?.required) {
      // Not written: the app would refuse the whole record. The shadow stays, so it is reported
      // again (an issue, a preview problem) until the source holds a value.
      requiredMissing(from, fm, (from === 'left' ? link.leftId : link.rightId) ?? link.id);
      return false;
    }
    if (valuesEqualAcross(c.value, fieldOf(fm, from), current, fieldOf(fm, to))) {
      // The other side already holds it (an echo, or a crash after a write): only the shadow moves.
      nextShadow(p)[fm.id] = { l: lv, r: rv };
      p.moved = true;
      out.stats.echoes++;
      return true;
    }
    p.writes ??= { left: {}, right: {} };
    p.expected ??= { left: {}, right: {} };
    p.writes[to][fieldOf(fm, to).id] = c.value;
    p.expected[to][fieldOf(fm, to).id] = current;
    nextShadow(p)[fm.id] = from === 'left' ? { l: source, r: c.value } : { l: c.value, r: source };
    return true;
  }

  function reconcilePair(link: Link, L: RecordData | null, R: RecordData | null) {
    if (link.shadow === null && (!L || !R)) {
      out.problems.push({
        code: 'shadow_missing',
        recordId: link.leftId ?? link.rightId ?? link.id,
        message: 'This linked record has no synced state yet; both sides are read again next run.',
      });
      return;
    }
    const p: PairState = { link, shadow: null, moved: false, writes: null, expected: null };
    let anyChange = false;
    for (const fm of mapping.fields) {
      const sf = link.shadow?.[fm.id] ?? null;
      // Fast path: a value identical to the shadow's (apps return what we stored) needs no normalising.
      if (
        sf !== null &&
        (L === null || (L.fields[fm.left.id] ?? null) === sf.l) &&
        (R === null || (R.fields[fm.right.id] ?? null) === sf.r)
      ) {
        continue;
      }
      const lv = L ? readField('left', L, fm) : { ok: true, value: sf ? sf.l : null };
      const rv = R ? readField('right', R, fm) : { ok: true, value: sf ? sf.r : null };
      if (!lv.ok || !rv.ok) continue;
      const lc = sf === null ? true : L !== null && !valuesEqual(lv.value, sf.l);
      const rc = sf === null ? true : R !== null && !valuesEqual(rv.value, sf.r);
      if (!lc && !rc) continue;
      anyChange = true;
      // A pair matched on its first sync has no history: a value on one side fills a blank on the
      // other whatever the winner side (a blank was never a choice, and taking it would lose data).
      if (sf === null && isBlank(lv.value) !== isBlank(rv.value)) {
        const from: Side = isBlank(lv.value) ? 'right' : 'left';
        if (writable(fm, from)) push(p, fm, from, lv.value, rv.value);
        else {
          nextShadow(p)[fm.id] = { l: lv.value, r: rv.value };
          p.moved = true;
        }
        continue;
      }
      if (lc && rc) {
        // Both differ from the shadow: equal in substance is a false conflict, else a real one.
        const asRight = convertFor('left', fm, lv.value, link.leftId ?? link.id);
        if (asRight.ok && valuesEqualAcross(asRight.value, fm.left, rv.value, fm.right)) {
          nextShadow(p)[fm.id] = { l: lv.value, r: rv.value };
          p.moved = true;
          out.stats.falseConflicts++;
          continue;
        }
        const forced: Side | null =
          writable(fm, 'left') && !writable(fm, 'right')
            ? 'left'
            : writable(fm, 'right') && !writable(fm, 'left')
              ? 'right'
              : null;
        if (sf !== null && forced === null && mapping.policy.conflictReview && !fm.owner) {
          out.heldConflicts.push({
            linkId: link.id,
            fieldMappingId: fm.id,
            left: lv.value,
            right: rv.value,
            shadow: sf,
          });
          out.stats.conflicts++;
          continue;
        }
        const winner = forced ?? fm.owner ?? mapping.policy.conflictWinner;
        if (sf !== null) {
          out.stats.conflicts++;
          out.resolvedConflicts.push({
            linkId: link.id,
            fieldMappingId: fm.id,
            winner,
            left: lv.value,
            right: rv.value,
          });
        }
        if (writable(fm, winner)) push(p, fm, winner, lv.value, rv.value);
        else {
          nextShadow(p)[fm.id] = { l: lv.value, r: rv.value };
          p.moved = true;
        }
        continue;
      }
      const from: Side = lc ? 'left' : 'right';
      if (writable(fm, from)) push(p, fm, from, lv.value, rv.value);
      else {
        // A one-way field: the edit on the receiving side stays there, and is not reported again.
        nextShadow(p)[fm.id] = { l: lv.value, r: rv.value };
        p.moved = true;
      }
    }
    if (!anyChange) {
      out.stats.unchanged++;
      return;
    }
    let wrote = false;
    for (const to of ['left', 'right'] as const) {
      const fields = p.writes?.[to];
      if (!fields || Object.keys(fields).length === 0) continue;
      const remoteId = to === 'left' ? link.leftId : link.rightId;
      if (!remoteId) continue;
      wrote = true;
      out.stats.updates++;
      out.operations.push({
        kind: 'update',
        side: to,
        linkId: link.id,
        remoteId,
        fields,
        expected: p.expected?.[to] ?? {},
        intended: nextShadow(p),
        idempotencyKey: keyFor(mapping.id, link.id, link.version, 'update', to),
      });
    }
    if (!wrote && p.moved) out.shadowUpdates.push({ linkId: link.id, shadow: nextShadow(p) });
  }

  function recreate(from: Side, record: RecordData, link: Link | null) {
    const to = otherSide(from);
    const fields: Record<string, CanonicalValue> = {};
    const intended: Shadow = {};
    let refused = false;
    for (const fm of mapping.fields) {
      if (!writable(fm, from)) {
        // Not written (read-only there, or it flows the other way only): the new record gets what
        // its app gives it, and the shadow takes that from the post-image (`shadowAfterWrite`), so
        // a created time the app stamps is never carried back over the source's own value.
        const v = readField(from, record, fm);
        if (v.ok) intended[fm.id] = from === 'left' ? { l: v.value, r: null } : { l: null, r: v.value };
        continue;
      }
      const v = readField(from, record, fm);
      const required = fieldOf(fm, to).options?.required === true;
      if (!v.ok) {
        refused ||= required;
        continue;
      }
      const c = convertFor(from, fm, v.value, record.id);
      if (!c.pending && required && (!c.ok || blank(c.value))) {
        // The app would refuse the record: it is not created until its source holds a value.
        if (c.ok) requiredMissing(from, fm, record.id);
        refused = true;
        continue;
      }
      if (c.pending) {
        // Created without it; the shadow says the other side has nothing yet (see PendingRelation).
        waitFor(c.pending, fm);
        intended[fm.id] = from === 'left' ? { l: v.value, r: null } : { l: null, r: v.value };
        continue;
      }
      if (!c.ok) continue;
      fields[fieldOf(fm, to).id] = c.value;
      intended[fm.id] = from === 'left' ? { l: v.value, r: c.value } : { l: c.value, r: v.value };
    }
    if (refused) return;
    out.stats.creates++;
    out.operations.push({
      kind: 'create',
      side: to,
      linkId: link?.id ?? null,
      sourceId: record.id,
      fields,
      intended,
      idempotencyKey: keyFor(
        mapping.id,
        link?.id ?? `${from}:${record.id}`,
        link?.version ?? 0,
        'create',
        to,
      ),
    });
  }

  // 2. Records with no link: create them on the other side, where the direction and filter allow.
  for (const from of ['left', 'right'] as const) {
    if (!flows(mapping.direction, from)) continue;
    for (const { record, claimed } of entries[from].values()) {
      if (claimed) continue;
      if (!passesFilter(mapping.filter, from, record)) continue;
      recreate(from, record, null);
    }
  }

  // 3. Deletes: protection, then the mass-delete circuit breaker, then the writes.
  const total = Math.max(input.totalLinks ?? input.links.length, input.links.length);
  const { maxCount, maxFraction, minCountForFraction } = mapping.policy.massDelete;
  for (const side of ['left', 'right'] as const) {
    const list = pendingDeletes.filter((d) => d.side === side);
    if (list.length === 0) continue;
    // The deletes on this side come from the other side's evidence. Counted per transaction where the
    // app tells (a single bulk delete past the count trips it); else all of this run's together.
    const evidence = changes[otherSide(side)];
    const bulk =
      evidence.largestDeleteBatch !== undefined && !evidence.scanComplete
        ? Math.min(list.length, evidence.largestDeleteBatch)
        : list.length;
    if (bulk > maxCount || (list.length >= minCountForFraction && list.length > maxFraction * total)) {
      out.circuitBreakers.push({ side, wouldDelete: list.length, linked: total });
      for (const d of list)
        out.deleteApprovals.push({
          linkId: d.link.id,
          side,
          remoteId: d.remoteId,
          reason: `Held by the mass-delete safeguard: ${list.length} of ${total} records were deleted on the ${otherSide(side)} side at once.`,
        });
      continue;
    }
    for (const d of list) {
      if (mapping.policy.deleteProtection) {
        out.deleteApprovals.push({
          linkId: d.link.id,
          side,
          remoteId: d.remoteId,
          reason: `Deleted on the ${otherSide(side)} side.`,
        });
        continue;
      }
      out.stats.deletes++;
      const expected: Record<string, CanonicalValue> = {};
      for (const fm of mapping.fields) {
        const sf = d.link.shadow?.[fm.id];
        if (sf) expected[fieldOf(fm, side).id] = shadowOf(sf, side);
      }
      out.operations.push({
        kind: 'delete',
        side,
        linkId: d.link.id,
        remoteId: d.remoteId,
        expected,
        idempotencyKey: keyFor(mapping.id, d.link.id, d.link.version, 'delete', side),
      });
    }
  }
  return out;
}

/**
 * The shadow after a successful write: the fields written take the value the app reports it stored
 * (its post-image, normalised), so the app's own normalisation is never mistaken for an edit.
 */
export function shadowAfterWrite(
  mapping: TableMappingSpec,
  op: Extract<WriteOp, { kind: 'create' | 'update' }>,
  postImage: RecordData,
): Shadow {
  const shadow: Shadow = { ...op.intended };
  for (const fm of mapping.fields) {
    const sf = shadow[fm.id];
    if (!sf) continue;
    const spec = fieldOf(fm, op.side);
    // A create's unwritten fields hold what the app gave the new record, when its post-image says.
    const from = otherSide(op.side);
    const unwritten = spec.readOnly === true || !flows(mapping.direction, from) || !flows(fm.direction, from);
    const given = op.kind === 'create' && unwritten && spec.id in postImage.fields;
    if (!(spec.id in op.fields) && !given) continue;
    const n = normalizeValue(spec.type, postImage.fields[spec.id] ?? null, {
      currencyCode: spec.options?.currencyCode,
    });
    if (!n.ok) continue;
    shadow[fm.id] = op.side === 'left' ? { l: n.value, r: sf.r } : { l: sf.l, r: n.value };
  }
  return shadow;
}
