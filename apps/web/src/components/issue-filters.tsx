import { Select } from '@mantine/core';
import { sideName, tableMappingName } from '../lib/schema-names';
import { useCoreBase } from '../lib/sync-queries';

/** Issue codes in words, for the type filter (codes not listed show as they are). */
export const ISSUE_TYPES: Record<string, string> = {
  unmapped_option: 'Option not paired',
  required_missing: 'Required value missing',
  type_mismatch: 'Value of another type',
  validation: 'Refused by the app',
  duplicate_key: 'Already exists there',
  missing_key: 'No match value',
  not_found: 'Record gone',
  version_conflict: 'Changed meanwhile',
  auth_invalid: 'Connection failing',
  permission_denied: 'No permission',
  access_denied: 'No access',
  rate_limited: 'Rate limited',
  transient: 'Temporary failure',
  service_unavailable: 'App unavailable',
  mass_delete: 'Mass delete held',
  record_limit: 'Record limit reached',
  drift: 'Changed without a signal',
};

type Filters = { code?: string; side?: string; tableMappingId?: string };

/**
 * Narrow the issues by type, by app and (within one sync) by table pair; the apps and table pairs
 * are named as the sync names them.
 */
export function IssueFilters({
  syncId,
  filters,
  onChange,
}: {
  syncId: string | null;
  filters: Filters;
  onChange: (change: Filters) => void;
}) {
  const sync = useCoreBase(syncId ?? undefined);
  const s = syncId ? sync.data : undefined;
  return (
    <>
      <Select
        aria-label="Issue type"
        placeholder="Any type"
        clearable
        w={200}
        data={Object.entries(ISSUE_TYPES).map(([value, label]) => ({ value, label }))}
        value={filters.code ?? null}
        onChange={(v) => onChange({ code: v ?? undefined })}
      />
      <Select
        aria-label="App"
        placeholder="Either app"
        clearable
        w={200}
        data={(['left', 'right'] as const).map((side) => ({
          value: side,
          label: s ? sideName(s, side) : side === 'left' ? 'First app' : 'Second app',
        }))}
        value={filters.side ?? null}
        onChange={(v) => onChange({ side: v ?? undefined })}
      />
      {s && (s.mappings?.tableMappings.length ?? 0) > 0 ? (
        <Select
          aria-label="Table pair"
          placeholder="Every table pair"
          clearable
          w={240}
          data={s.mappings.tableMappings.map((m) => ({
            value: m.id,
            label: tableMappingName(s, m.id) ?? m.id,
          }))}
          value={filters.tableMappingId ?? null}
          onChange={(v) => onChange({ tableMappingId: v ?? undefined })}
        />
      ) : null}
    </>
  );
}
