import type { CoreBase } from '@lockstep/contract';
import { Anchor, Breadcrumbs, Button, Group, ScrollArea, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';

const SECTIONS = [
  { label: 'Overview', path: '', match: /^\/syncs\/[^/]+(\/overview)?$/ },
  { label: 'Apps', path: 'edit', match: /^\/syncs\/edit\// },
  { label: 'Tables & fields', path: 'table-mappings', match: /\/(table-mappings|table-mapping-editor)/ },
  { label: 'Preview', path: 'sync-preview/scan', match: /\/sync-preview\// },
  { label: 'Operations', path: 'operations', match: /\/operations$/ },
  { label: 'Issues', path: 'issues', match: /\/issues$/ },
  { label: 'Trace logs', path: 'trace-logs', match: /\/trace-logs$/ },
  { label: 'Dev tools', path: 'dev-tools', match: /\/dev-tools/ },
] as const;

function hrefOf(id: string, path: string) {
  if (path === '') return `/syncs/${id}`;
  if (path === 'edit') return `/syncs/edit/${id}`;
  return `/syncs/${id}/${path}`;
}

/** The header of every screen of one sync: where you are, and the sync's other screens one click away. */
export function SyncNav({
  sync,
  title,
  actions,
}: {
  sync: Pick<CoreBase, 'id' | 'name'>;
  title?: string;
  actions?: ReactNode;
}) {
  const { pathname } = useLocation();
  return (
    <div>
      <Breadcrumbs mb={4}>
        <Anchor component={Link} to="/syncs" size="sm">
          Syncs
        </Anchor>
        <Anchor component={Link} to={`/syncs/${sync.id}`} size="sm">
          {sync.name}
        </Anchor>
      </Breadcrumbs>
      <Group justify="space-between" mb="sm">
        <Title order={2}>{title ?? sync.name}</Title>
        {actions}
      </Group>
      <ScrollArea type="never">
        <Group gap={4} wrap="nowrap" component="nav" aria-label="Sync sections">
          {SECTIONS.map((s) => {
            const active = s.match.test(pathname);
            return (
              <Button
                key={s.label}
                component={Link}
                to={hrefOf(sync.id, s.path)}
                size="compact-sm"
                variant={active ? 'light' : 'subtle'}
                aria-current={active ? 'page' : undefined}
              >
                {s.label}
              </Button>
            );
          })}
        </Group>
      </ScrollArea>
    </div>
  );
}
