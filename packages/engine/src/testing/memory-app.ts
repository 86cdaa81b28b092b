import type { ChangeSet } from '../reconcile';
import type { CanonicalValue, RecordData } from '../types';

type Stored = { id: string; fields: Record<string, CanonicalValue> };

/**
 * An in-memory app for tests: it normalises what it stores the way real apps do (a `normalize`
 * per field), may omit empty values and false checkboxes (like Airtable), keeps a change log for
 * incremental reads, and remembers idempotency keys so a retried create returns the same record.
 */
export class MemoryApp {
  readonly records = new Map<string, Stored>();
  private readonly log: { seq: number; id: string; op: 'upsert' | 'delete'; visible: boolean }[] = [];
  private readonly appliedKeys = new Map<string, string>();
  private seq = 0;
  private nextId = 1;
  writes = 0;

  constructor(
    readonly prefix: string,
    private readonly normalize: (fieldId: string, value: CanonicalValue) => CanonicalValue = (_f, v) => v,
    private readonly omitEmpty = false,
  ) {}

  private store(id: string, fields: Record<string, CanonicalValue>) {
    const clean: Record<string, CanonicalValue> = {};
    for (const [k, v] of Object.entries(fields)) {
      const n = this.normalize(k, v);
      if (this.omitEmpty && (n === null || n === false || n === '' || (Array.isArray(n) && n.length === 0)))
        continue;
      clean[k] = n;
    }
    this.records.set(id, { id, fields: clean });
    this.log.push({ seq: ++this.seq, id, op: 'upsert', visible: true });
    return { id, fields: { ...clean } };
  }

  /** A user edit in the app (not through the sync). */
  userCreate(fields: Record<string, CanonicalValue>): string {
    const id = `${this.prefix}${this.nextId++}`;
    this.store(id, fields);
    return id;
  }
  userUpdate(id: string, fields: Record<string, CanonicalValue>) {
    const r = this.records.get(id);
    if (r) this.store(id, { ...r.fields, ...fields });
  }
  userDelete(id: string) {
    if (this.records.delete(id)) this.log.push({ seq: ++this.seq, id, op: 'delete', visible: true });
  }
  /**
   * A user edit in a transaction that commits late: its change takes its place in the log now (a
   * sequence number, as a database hands out ids in statement order) but is visible, and the record
   * changed, only at `commit`, after later changes may have been read.
   */
  userBeginUpdate(id: string, fields: Record<string, CanonicalValue>): { commit(): void } {
    const entry = { seq: ++this.seq, id, op: 'upsert' as const, visible: false };
    this.log.push(entry);
    return {
      commit: () => {
        const r = this.records.get(id);
        if (r) {
          const before = this.log.length;
          this.store(id, { ...r.fields, ...fields });
          this.log.splice(before, 1); // the change is the entry made at the start
        }
        entry.visible = true;
      },
    };
  }

  /** The sync's writes; each returns the post-image, as the app stored it. */
  create(fields: Record<string, CanonicalValue>, idempotencyKey: string): RecordData {
    this.writes++;
    const existing = this.appliedKeys.get(idempotencyKey);
    if (existing && this.records.has(existing)) return { ...(this.records.get(existing) as Stored) };
    const id = `${this.prefix}${this.nextId++}`;
    this.appliedKeys.set(idempotencyKey, id);
    return this.store(id, fields);
  }
  update(id: string, fields: Record<string, CanonicalValue>): RecordData | null {
    this.writes++;
    const r = this.records.get(id);
    if (!r) return null;
    return this.store(id, { ...r.fields, ...fields });
  }
  delete(id: string) {
    this.writes++;
    this.userDelete(id);
  }

  /** How many stored changes the app has seen (user edits and sync writes that changed a record). */
  get changeCount(): number {
    return this.log.length;
  }

  /**
   * How far a reader may move its cursor: up to the change before the oldest one not committed yet
   * (commit order, as the PostgreSQL connector reads below the oldest running transaction).
   */
  get cursor(): number {
    const open = this.log.find((e) => !e.visible);
    return open ? open.seq - 1 : this.seq;
  }

  /** Changes after a cursor (incremental) or every record (full scan); `dropEvery` loses part of a full scan. */
  read(cursor: number | null, options: { dropEvery?: number } = {}): ChangeSet {
    if (cursor === null) {
      const all = [...this.records.values()].map((r) => ({ id: r.id, fields: { ...r.fields } }));
      const kept = options.dropEvery ? all.filter((_, i) => i % options.dropEvery! !== 0) : all;
      return { records: kept, deletedIds: [], scanComplete: kept.length === all.length };
    }
    const ids = new Map<string, 'upsert' | 'delete'>();
    const horizon = this.cursor;
    for (const e of this.log) if (e.seq > cursor && e.seq <= horizon) ids.set(e.id, e.op);
    const records: RecordData[] = [];
    const deletedIds: string[] = [];
    for (const [id, op] of ids) {
      const r = this.records.get(id);
      if (op === 'delete' || !r) deletedIds.push(id);
      else records.push({ id, fields: { ...r.fields } });
    }
    return { records, deletedIds, scanComplete: false };
  }
}
