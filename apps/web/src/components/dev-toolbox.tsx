import type { CurrentUser } from '@lockstep/contract';
import { Anchor, Button, Code, Drawer, Group, Stack, Table, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { recentApiErrors } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { useDevFlag } from '../lib/queries';

/** The experiment flag that turns the toolbox on for a user (the local dev flag does it in one browser). */
export const DEV_TOOLBOX_FLAG = 'INVISIBLE_DEV_TOOLBOX';

/** Ctrl+Shift+D (Cmd+Shift+D on a Mac) opens and closes the toolbox. */
export function isToolboxKey(event: KeyboardEvent): boolean {
  return (event.ctrlKey || event.metaKey) && event.shiftKey && event.key.toLowerCase() === 'd';
}

/** The sync id of a /syncs/{id}/... route, for the trace-log link. */
function syncIdOf(pathname: string): string | null {
  const match = /^\/syncs\/([^/]+)/.exec(pathname);
  const id = match?.[1];
  return id && id !== 'new' && id !== 'edit' ? id : null;
}

/** What the copy button puts on the clipboard: enough to reproduce a problem, no tokens or data. */
export function debugBundle(me: CurrentUser, route: string) {
  return {
    app: 'lockstep-web',
    version: __APP_VERSION__,
    at: new Date().toISOString(),
    route,
    userId: me.id,
    role: me.role,
    impersonatedBy: me.impersonatedBy,
    plan: me.lockstepUser.subscription.planDisplayName,
    subscriptionStatus: me.lockstepUser.subscription.status,
    experimentFlags: me.lockstepUser.experimentFlags,
    recentApiErrors: recentApiErrors(),
    userAgent: navigator.userAgent,
  };
}

/**
 * The invisible developer toolbox (spec section 6): nothing on the page shows it; when the
 * invisible-dev-toolbox flag is on (the local dev flag, or the user's experiment flag), the key
 * combination opens a drawer with the user, plan, flags, version, links and a debug bundle.
 */
export function DevToolbox({ me }: { me: CurrentUser }) {
  const localFlag = useDevFlag('invisibleDevToolbox');
  const enabled = localFlag || me.lockstepUser.experimentFlags[DEV_TOOLBOX_FLAG] === true;
  const [open, setOpen] = useState(false);
  const location = useLocation();
  const route = `${location.pathname}${location.search}`;

  useEffect(() => {
    if (!enabled) {
      setOpen(false);
      return;
    }
    const onKey = (event: KeyboardEvent) => {
      if (!isToolboxKey(event)) return;
      event.preventDefault();
      setOpen((o) => !o);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);

  if (!enabled) return null;
  const syncId = syncIdOf(location.pathname);
  const subscription = me.lockstepUser.subscription;

  async function copyBundle() {
    try {
      await navigator.clipboard.writeText(JSON.stringify(debugBundle(me, route), null, 2));
      showSuccess('Debug bundle copied.');
    } catch (error) {
      showError(error, 'Could not copy the debug bundle');
    }
  }

  return (
    <Drawer opened={open} onClose={() => setOpen(false)} position="right" title="Developer toolbox" size="md">
      <Stack>
        <Table>
          <Table.Tbody>
            <Table.Tr>
              <Table.Th>User</Table.Th>
              <Table.Td>
                {me.email} <Code>{me.id}</Code> ({me.role})
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Plan</Table.Th>
              <Table.Td>
                {subscription.planDisplayName} ({subscription.status}
                {subscription.daysRemaining === null ? '' : `, ${subscription.daysRemaining} days left`})
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Td>{__APP_VERSION__}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Route</Table.Th>
              <Table.Td>
                <Code>{route}</Code>
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
        <div>
          <Text fw={600} size="sm">
            Experiment flags
          </Text>
          <Code block>{JSON.stringify(me.lockstepUser.experimentFlags, null, 2)}</Code>
        </div>
        <Stack gap={4}>
          <Text fw={600} size="sm">
            Links
          </Text>
          <Anchor href="/api/docs" target="_blank">
            API reference (OpenAPI)
          </Anchor>
          <Anchor href="/api/docs/json" target="_blank">
            OpenAPI document (JSON)
          </Anchor>
          <Anchor component={Link} to="/job-viewer">
            Job viewer
          </Anchor>
          {syncId ? (
            <Anchor component={Link} to={`/syncs/${encodeURIComponent(syncId)}/trace-logs`}>
              Trace logs of this sync
            </Anchor>
          ) : (
            <Text size="sm" c="dimmed">
              Trace logs: open a sync first.
            </Text>
          )}
        </Stack>
        <Text size="sm" c="dimmed">
          {recentApiErrors().length} recent API errors on this page.
        </Text>
        <Group>
          <Button onClick={() => void copyBundle()}>Copy debug bundle</Button>
        </Group>
      </Stack>
    </Drawer>
  );
}
