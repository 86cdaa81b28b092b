import type { CoreBase } from '@lockstep/contract';

export type Side = 'left' | 'right';

const externalBase = (sync: CoreBase | undefined, side: Side) =>
  side === 'left' ? sync?.leftExternalBase : sync?.rightExternalBase;

/** "Left app" / "Right app" in the words the user chose: the base's name and its app. */
export function sideName(sync: CoreBase, side: Side): string {
  const ext = externalBase(sync, side);
  return ext ? ext.name : side === 'left' ? 'First app' : 'Second app';
}

/**
 * Column names by column id and by remote id, for one side or both: writes and trace events key
 * their values by the written side's remote id, mappings and shadows by the column id.
 */
export function columnNames(sync: CoreBase | undefined, side?: Side): Map<string, string> {
  const names = new Map<string, string>();
  for (const s of side ? [side] : (['left', 'right'] as const))
    for (const table of externalBase(sync, s)?.externalTables ?? [])
      for (const column of table.externalColumns) {
        // Remote ids can repeat across tables; the first table's column keeps the name.
        if (!names.has(column.remoteId)) names.set(column.remoteId, column.name);
        names.set(column.id, column.name);
      }
  return names;
}

/** Names for the fields of one side's written image; an unknown field keeps its id. */
export function fieldLabeler(sync: CoreBase | undefined, side: Side): (field: string) => string {
  const names = columnNames(sync, side);
  return (field) => names.get(field) ?? field;
}

/** Table names by table id and remote id, for one side or both. */
export function tableNames(sync: CoreBase | undefined, side?: Side): Map<string, string> {
  const names = new Map<string, string>();
  for (const s of side ? [side] : (['left', 'right'] as const))
    for (const table of externalBase(sync, s)?.externalTables ?? []) {
      if (!names.has(table.remoteId)) names.set(table.remoteId, table.name);
      names.set(table.id, table.name);
    }
  return names;
}

/** A table mapping as the two tables it pairs ("Contacts ⇄ Subscribers"), or null if unknown. */
export function tableMappingName(sync: CoreBase, tableMappingId: string): string | null {
  const mapping = sync.mappings.tableMappings.find((m) => m.id === tableMappingId);
  if (!mapping) return null;
  const tables = tableNames(sync);
  return `${tables.get(mapping.leftTableId) ?? mapping.leftTableId} ⇄ ${tables.get(mapping.rightTableId) ?? mapping.rightTableId}`;
}

export type ShadowRow = { key: string; label: string; left: unknown; right: unknown; single: boolean };

function isSidePair(v: unknown): v is { l: unknown; r: unknown } {
  return typeof v === 'object' && v !== null && 'l' in v && 'r' in v;
}

/**
 * The shadow as rows: each field mapping's last synced value on both sides ({l, r}), named by the
 * two columns it pairs. A value without sides is shown as one value.
 */
export function shadowRows(sync: CoreBase, shadow: Record<string, unknown>): ShadowRow[] {
  const columns = columnNames(sync);
  const pairs = new Map<string, string>();
  for (const m of sync.mappings.tableMappings)
    for (const c of m.columnMappings)
      if (c.id)
        pairs.set(
          c.id,
          `${columns.get(c.leftColumnId) ?? c.leftColumnId} ⇄ ${columns.get(c.rightColumnId) ?? c.rightColumnId}`,
        );
  return Object.entries(shadow).map(([key, value]) =>
    isSidePair(value)
      ? { key, label: pairs.get(key) ?? key, left: value.l, right: value.r, single: false }
      : { key, label: pairs.get(key) ?? key, left: value, right: value, single: true },
  );
}

/**
 * Schema generation's names an app could not take (too long, a forbidden character, taken): a
 * sentence listing them as "asked → made", or '' when none changed.
 */
export function renamedNote(items: { name: string; renamedFrom?: string }[]): string {
  const renamed = items.filter((i) => i.renamedFrom !== undefined && i.renamedFrom !== i.name);
  return renamed.length === 0
    ? ''
    : ` Renamed: ${renamed.map((i) => `${i.renamedFrom} → ${i.name}`).join(', ')}.`;
}
