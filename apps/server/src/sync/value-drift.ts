import type { TableConnector } from '@lockstep/connectors';
import { differencesFromShadow, type RecordData } from '@lockstep/engine';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import { shadowFromStore } from '../db/stored-shadow';
import { loadSyncPlan, type MappingPlan } from './load-sync-plan';
import { recordIssue } from './run/issues';
import { recordNamer } from './run/record-names';
import type { Deps } from './run/run-context';
import { sideConnector } from './side-connector';

/**
 * Value-level drift: the live values of linked pairs read from both apps and compared with what
 * Lockstep last synced (the shadow). A field that differs though no change was ever signalled (an
 * edit made with the app's change capture off, a webhook that never came) is drift: it would stay
 * apart until someone edits the record again. Each drifted record becomes a `drift` issue; its Retry
 * reads both sides and syncs the edited one over, as any retry does.
 *
 * Differences that a run is about to carry are not drift: the records that differ are read again
 * after the sync's next run (`settle`), and only what still differs counts.
 */
export const DRIFT_CODE = 'drift';

/** How many links are read per request to each app (readRecords by id). */
const BATCH = 100;

export type DriftOptions = {
  /** Check every linked pair (true) or a random sample of `sample` per table pair. */
  full: boolean;
  sample: number;
  /** Lets a run carry the changes it knows of; resolves once it has (or gave up waiting). */
  settle: () => Promise<void>;
  /** Called as links are read; false stops the check (cancelled). */
  progress?: (done: number, total: number) => Promise<boolean>;
};

export type TableDriftResult = {
  tableMappingId: string;
  table: string;
  checked: number;
  drifted: number;
  /** Why this pair could not be compared record by record, if it could not. */
  skipped: string | null;
};

type LinkRow = { id: string; left_remote_id: string; right_remote_id: string; shadow: unknown };
type Candidate = {
  link: LinkRow;
  fields: string[];
  side: 'left' | 'right' | null;
  live: { left: RecordData; right: RecordData };
};
type Readers = { left: TableConnector; right: TableConnector };

async function linksToCheck(db: Db, m: MappingPlan, o: DriftOptions): Promise<LinkRow[]> {
  const rows = await sql<LinkRow>`select id, left_remote_id, right_remote_id, shadow from core_meta_record
    where table_mapping_id = ${m.tableMappingId}::uuid and not sync_disabled
      and left_remote_id is not null and right_remote_id is not null
    order by ${o.full ? sql`id` : sql`random()`} ${o.full ? sql`` : sql`limit ${o.sample}`}`.execute(db);
  return rows.rows;
}

/** The linked pairs among `links` whose live values differ from the shadow (one read per side per batch). */
async function differing(
  m: MappingPlan,
  sides: Readers,
  links: LinkRow[],
  onBatch?: (n: number) => Promise<boolean>,
): Promise<Candidate[] | null> {
  const out: Candidate[] = [];
  for (let i = 0; i < links.length; i += BATCH) {
    const batch = links.slice(i, i + BATCH);
    const [L, R] = await Promise.all([
      sides.left.readRecords?.(
        m.left.tableRemoteId,
        batch.map((l) => l.left_remote_id),
      ) ?? [],
      sides.right.readRecords?.(
        m.right.tableRemoteId,
        batch.map((l) => l.right_remote_id),
      ) ?? [],
    ]);
    const left = new Map(L.map((r) => [r.id, r]));
    const right = new Map(R.map((r) => [r.id, r]));
    for (const link of batch) {
      const l = left.get(link.left_remote_id);
      const r = right.get(link.right_remote_id);
      // A record gone from one side is a delete the runs carry (or hold for approval), not drift.
      if (!l || !r) continue;
      const diffs = differencesFromShadow(m.spec, shadowFromStore(link.shadow), l, r);
      if (diffs.length === 0) continue;
      const sides = new Set(diffs.map((d) => d.side));
      const names = [
        ...new Set(
          diffs.map((d) => {
            const fm = m.spec.fields.find((f) => f.id === d.fieldMappingId);
            return fm ? (d.side === 'left' ? fm.left.name : fm.right.name) : d.fieldMappingId;
          }),
        ),
      ];
      out.push({
        link,
        fields: names,
        side: sides.size === 1 ? ([...sides][0] ?? null) : null,
        live: { left: l, right: r },
      });
    }
    if (onBatch && !(await onBatch(batch.length))) return null;
  }
  return out;
}

/**
 * Checks every table pair of a sync; opens (or keeps open) one `drift` issue per drifted record.
 * Answers per table pair what was checked and found; null when cancelled.
 */
export async function checkValueDrift(
  deps: Deps,
  coreBaseId: string,
  o: DriftOptions,
): Promise<TableDriftResult[] | null> {
  const plan = await loadSyncPlan(deps.db, coreBaseId);
  if (!plan) return [];
  const work: { m: MappingPlan; links: LinkRow[]; skipped: string | null; sides: Readers }[] = [];
  for (const m of plan.mappings) {
    const [left, right] = await Promise.all([
      sideConnector(deps, m.left, 'left'),
      sideConnector(deps, m.right, 'right'),
    ]);
    if (!left.readRecords || !right.readRecords) {
      work.push({
        m,
        links: [],
        skipped: 'These apps are not read record by record: the next full read compares them.',
        sides: { left, right },
      });
      continue;
    }
    work.push({ m, links: await linksToCheck(deps.db, m, o), skipped: null, sides: { left, right } });
  }
  const total = work.reduce((n, w) => n + w.links.length, 0);
  let done = 0;
  const step = async (n: number) => {
    done += n;
    return o.progress ? o.progress(done, total) : true;
  };
  const found: { w: (typeof work)[number]; candidates: Candidate[] }[] = [];
  for (const w of work) {
    if (w.skipped) continue;
    const candidates = await differing(w.m, w.sides, w.links, step);
    if (candidates === null) return null;
    found.push({ w, candidates });
  }
  // What a run carries now was only late, not drift: read the differing pairs again after it.
  if (found.some((f) => f.candidates.length > 0)) await o.settle();
  const results: TableDriftResult[] = [];
  for (const w of work) {
    const f = found.find((x) => x.w === w);
    let drifted: Candidate[] = [];
    if (f && f.candidates.length > 0) {
      const again =
        await sql<LinkRow>`select id, left_remote_id, right_remote_id, shadow from core_meta_record
        where id = any(${f.candidates.map((c) => c.link.id)}::uuid[])
          and left_remote_id is not null and right_remote_id is not null`.execute(deps.db);
      drifted = (await differing(w.m, w.sides, again.rows)) ?? [];
      for (const c of drifted) await openDriftIssue(deps.db, plan.ownerId, coreBaseId, w.m, c);
    }
    results.push({
      tableMappingId: w.m.tableMappingId,
      table: `${w.m.left.tableName} ⇄ ${w.m.right.tableName}`,
      checked: w.links.length,
      drifted: drifted.length,
      skipped: w.skipped,
    });
  }
  return results;
}

async function openDriftIssue(db: Db, ownerId: string, coreBaseId: string, m: MappingPlan, c: Candidate) {
  const where = c.side === null ? 'both apps' : c.side === 'left' ? m.left.tableName : m.right.tableName;
  const remoteId = c.side === 'right' ? c.link.right_remote_id : c.link.left_remote_id;
  const context = {
    ownerId,
    coreBaseId,
    m,
    recordName: recordNamer(m, { left: [c.live.left], right: [c.live.right] }),
  } as Parameters<typeof recordIssue>[1];
  await recordIssue(
    db,
    context,
    null,
    {
      code: DRIFT_CODE,
      message: `Values differ from what was last synced without a change signal: ${c.fields.join(', ')}`,
      userFacingMessage: `${c.fields.join(', ')} in ${where} no longer match what Lockstep last synced, and no change was ever signalled (an edit made without the app's change capture, or a lost webhook), so no run would carry it. Retry to sync the edited side over.`,
    },
    c.side,
    remoteId,
    // The issue names its pair, so Retry reads exactly this pair again.
    c.link.id,
  );
}
