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
  private readonly log: { seq: number; id: string; op: 'upsert' | 'delete' }[] = [];
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
    this.log.push({ seq: ++this.seq, id, op: 'upsert' });
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
    if (this.records.delete(id)) this.log.push({ seq: ++this.seq, id, op: 'delete' });
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

  get cursor(): number {
    return this.seq;
  }

  /** Changes after a cursor (incremental) or every record (full scan); `dropEvery` loses part of a full scan. */
  read(cursor: number | null, options: { dropEvery?: number } = {}): ChangeSet {
    if (cursor === null) {
      const all = [...this.records.values()].map((r) => ({ id: r.id, fields: { ...r.fields } }));
      const kept = options.dropEvery ? all.filter((_, i) => i % options.dropEvery! !== 0) : all;
      return { records: kept, deletedIds: [], scanComplete: kept.length === all.length };
    }
    const ids = new Map<string, 'upsert' | 'delete'>();
    for (const e of this.log) if (e.seq > cursor) ids.set(e.id, e.op);
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
