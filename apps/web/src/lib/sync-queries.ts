import type {
  ConnectorInfo,
  CoreBase,
  ExternalBase,
  ExternalConnection,
  SyncPreview,
  SyncStatus,
  TableMapping,
} from '@lockstep/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './api';
import type { Paged } from './paged';

/** One sync with both bases' full schemas: what every editing screen works from. */
export function useCoreBase(id: string | undefined) {
  return useQuery({
    queryKey: ['core-base', id],
    queryFn: () => api<CoreBase>(`/rest/core-bases/${id}?detailLevel=fullBaseSchema`),
    enabled: Boolean(id),
  });
}

export function useSyncStatus(id: string | undefined, refetchInterval: number | false = 5000) {
  return useQuery({
    queryKey: ['sync-status', id],
    queryFn: () => api<SyncStatus>(`/rest/core-bases/${id}/sync-status`),
    enabled: Boolean(id),
    refetchInterval,
  });
}

export function useConnectorInfo() {
  return useQuery({
    queryKey: ['connector-info'],
    queryFn: () => api<ConnectorInfo[]>('/rest/connector-info'),
    staleTime: 5 * 60_000,
  });
}

export function useConnections(type: string | null) {
  return useQuery({
    queryKey: ['external-connections', type],
    queryFn: () => api<Paged<ExternalConnection>>(`/rest/external-connections?skip=0&take=100&type=${type}`),
    enabled: Boolean(type),
  });
}

export type DemoDatabases = {
  available: boolean;
  items: { name: string; displayName: string; description: string }[];
};

export function useDemoDatabases() {
  return useQuery({
    queryKey: ['demo-databases'],
    queryFn: () => api<DemoDatabases>('/rest/demo-databases'),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export type SandboxApps = {
  available: boolean;
  items: { connectorType: string; displayName: string; description: string }[];
};

/** Simulated app accounts a local server offers, to try a connector without an account. */
export function useSandboxApps() {
  return useQuery({
    queryKey: ['sandbox-apps'],
    queryFn: () => api<SandboxApps>('/rest/sandbox-apps'),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useLatestPreview(coreBaseId: string | undefined, refetchInterval: number | false) {
  return useQuery({
    queryKey: ['sync-previews', coreBaseId],
    queryFn: async () =>
      (await api<{ items: SyncPreview[] }>(`/rest/sync-preview/core-bases/${coreBaseId}`)).items,
    enabled: Boolean(coreBaseId),
    refetchInterval,
  });
}

/** After a change to a sync: everything that shows it reloads. */
export function useInvalidateSync() {
  const client = useQueryClient();
  return (id: string) =>
    Promise.all([
      client.invalidateQueries({ queryKey: ['core-base', id] }),
      client.invalidateQueries({ queryKey: ['sync-status', id] }),
      client.invalidateQueries({ queryKey: ['core-bases'] }),
      client.invalidateQueries({ queryKey: ['limit-data'] }),
    ]);
}

export type Column = ExternalBase['externalTables'][number]['externalColumns'][number];
export type Table = ExternalBase['externalTables'][number];

/** A table mapping as PATCH takes it back: the whole list is sent, ids keep existing mappings. */
export function toMappingInput(m: TableMapping) {
  return {
    id: m.id,
    leftTableId: m.leftTableId,
    rightTableId: m.rightTableId,
    syncDirection: m.syncDirection,
    filter: m.filter ?? null,
    matchOnFieldId: m.matchOnFieldId,
    matchOnSecondaryFieldId: m.matchOnSecondaryFieldId,
    conflictWinnerSide: m.conflictWinnerSide,
    conflictReview: m.conflictReview,
    deleteProtection: m.deleteProtection,
    columnMappings: m.columnMappings.map((c) => ({
      leftColumnId: c.leftColumnId,
      rightColumnId: c.rightColumnId,
      syncDirection: c.syncDirection,
      ownerSide: c.ownerSide ?? null,
      optionPairs: c.optionPairs ?? null,
    })),
  };
}
// A new pair has no id yet.
export type MappingInput = Omit<ReturnType<typeof toMappingInput>, 'id'> & { id?: string };

/** Saves the whole mapping list of a sync; the server checks every field pair with the engine. */
export async function saveMappings(
  coreBaseId: string,
  tableMappings: MappingInput[],
  allowUnsupported = false,
) {
  const query = `detailLevel=fullBaseSchema${allowUnsupported ? '&allowUnsupported=true' : ''}`;
  return api<CoreBase>(`/rest/core-bases/${coreBaseId}?${query}`, {
    method: 'PATCH',
    body: { mappings: { tableMappings } },
  });
}

export function tableOf(base: CoreBase, tableId: string): { side: 'left' | 'right'; table: Table } | null {
  for (const side of ['left', 'right'] as const) {
    const ext = side === 'left' ? base.leftExternalBase : base.rightExternalBase;
    const table = ext?.externalTables.find((t) => t.id === tableId);
    if (table) return { side, table };
  }
  return null;
}

export const DIRECTION_LABEL = {
  both: 'Both ways',
  left_to_right: 'One way →',
  right_to_left: 'One way ←',
} as const;
