import type { CoreBase } from '@lockstep/contract';
import { Text } from '@mantine/core';
import { useMemo } from 'react';
import { isInstant } from '../lib/local-time';
import { columnNames, type Side, sideName, tableMappingName, tableNames } from '../lib/schema-names';
import { formatValue } from './change-diff-table';
import { LabelledList } from './labelled-list';
import { LocalTime } from './local-time';

type Scope = Side | 'any';
type Names = { columns: Record<Scope, Map<string, string>>; tables: Record<Scope, Map<string, string>> };
type Context = { sync: CoreBase; names: Names; scope: Scope };

const isSide = (v: unknown): v is Side => v === 'left' || v === 'right';
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
// Keys whose value names a column or a table: the engine traces ids, the user knows names.
const FIELD_KEY = /^(field|column)(Id)?$|(Field|Column)Id$/;
const FIELD_LIST_KEY = /^(fields|columns|fieldIds|columnIds)$/;
const TABLE_KEY = /^table(Id)?$|TableId$/;

/** A key as a label: a side by its base's name, a column by its name, anything else as traced. */
function labelOf(key: string, ctx: Context): string {
  if (isSide(key)) return sideName(ctx.sync, key);
  return ctx.names.columns[ctx.scope].get(key) ?? key;
}

function TraceValue({ name, value, ctx }: { name: string; value: unknown; ctx: Context }) {
  if (isRecord(value)) {
    if (Object.keys(value).length === 0)
      return (
        <Text span size="xs" c="dimmed">
          (none)
        </Text>
      );
    // Under "left"/"right", ids are that side's ids.
    return <Fields data={value} ctx={isSide(name) ? { ...ctx, scope: name } : ctx} />;
  }
  if (Array.isArray(value)) {
    if (value.length === 0)
      return (
        <Text span size="xs" c="dimmed">
          (none)
        </Text>
      );
    if (value.every((v) => !isRecord(v) && !Array.isArray(v))) {
      const columns = FIELD_LIST_KEY.test(name) ? ctx.names.columns[ctx.scope] : null;
      return value.map((v) => (typeof v === 'string' ? (columns?.get(v) ?? v) : formatValue(v))).join(', ');
    }
    // A list of objects: numbered, each labelled like the event itself.
    const items = value.map((v, i) => ({
      key: String(i),
      label: `${i + 1}.`,
      value: <TraceValue name={name} value={v} ctx={ctx} />,
    }));
    return <LabelledList items={items} />;
  }
  if (typeof value === 'string') {
    if (isInstant(value)) return <LocalTime iso={value} size="xs" span />;
    if (name === 'side' && isSide(value)) return sideName(ctx.sync, value);
    if (name === 'tableMappingId') return tableMappingName(ctx.sync, value) ?? value;
    if (TABLE_KEY.test(name)) return ctx.names.tables[ctx.scope].get(value) ?? value;
    if (FIELD_KEY.test(name)) return ctx.names.columns[ctx.scope].get(value) ?? value;
  }
  return formatValue(value);
}

function Fields({ data, ctx }: { data: Record<string, unknown>; ctx: Context }) {
  const items = Object.entries(data).map(([key, value]) => ({
    key,
    label: labelOf(key, ctx),
    value: <TraceValue name={key} value={value} ctx={ctx} />,
  }));
  return <LabelledList items={items} />;
}

/**
 * A trace event's data as labelled rows: sides by their base names, tables, table pairs and fields
 * by their names (ids the schema does not know stay as they are); nested objects nest.
 */
export function TraceData({ data, sync }: { data: Record<string, unknown>; sync: CoreBase }) {
  // Built once per sync, not per key: a page lists many events.
  const names = useMemo<Names>(
    () => ({
      columns: { left: columnNames(sync, 'left'), right: columnNames(sync, 'right'), any: columnNames(sync) },
      tables: { left: tableNames(sync, 'left'), right: tableNames(sync, 'right'), any: tableNames(sync) },
    }),
    [sync],
  );
  return <Fields data={data} ctx={{ sync, names, scope: 'any' }} />;
}
