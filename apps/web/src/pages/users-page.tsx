import type { UserSummary } from '@lockstep/contract';
import {
  Badge,
  Button,
  Group,
  Loader,
  Modal,
  Pagination,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { AssignPlanModal } from '../components/assign-plan-modal';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';
import { authClient } from '../lib/auth-client';
import { showError, showSuccess } from '../lib/notify';
import { PAGE_SIZE, type Paged, pageQuery } from '../lib/paged';

/** Staff: search users, impersonate one, or delete one (spec sections 4 and 6). */
export function UsersPage() {
  const [q, setQ] = useState('');
  const [debounced] = useDebouncedValue(q, 250);
  const [page, setPage] = useState(1);
  const [deleting, setDeleting] = useState<UserSummary | null>(null);
  const [assigning, setAssigning] = useState<UserSummary | null>(null);
  const queryClient = useQueryClient();
  const users = useQuery({
    queryKey: ['users', debounced, page],
    queryFn: () => api<Paged<UserSummary>>(`/rest/users?${pageQuery(page, { q: debounced })}`),
  });

  async function impersonate(user: UserSummary) {
    const result = await authClient.admin.impersonateUser({ userId: user.id });
    if (result.error) {
      showError(new Error(result.error.message ?? 'Could not impersonate this user.'));
      return;
    }
    window.location.assign('/syncs');
  }

  async function remove(user: UserSummary) {
    try {
      await api(`/rest/users/${user.id}`, { method: 'DELETE' });
      showSuccess(`${user.email} was deleted.`);
      await queryClient.invalidateQueries({ queryKey: ['users'] });
    } catch (error) {
      showError(error, 'Could not delete this user');
    } finally {
      setDeleting(null);
    }
  }

  return (
    <Stack>
      <Title order={2}>Users</Title>
      <TextInput
        placeholder="Search by email or name"
        value={q}
        onChange={(e) => {
          setQ(e.currentTarget.value);
          setPage(1);
        }}
        maw={400}
      />
      {users.isLoading ? <Loader /> : null}
      {users.error ? <ErrorAlert error={users.error} title="Could not load the users" /> : null}
      {users.data && users.data.items.length === 0 ? <Text c="dimmed">No users match.</Text> : null}
      {users.data && users.data.items.length > 0 ? (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Email</Table.Th>
              <Table.Th>Plan</Table.Th>
              <Table.Th>Joined</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {users.data.items.map((u) => (
              <Table.Tr key={u.id}>
                <Table.Td>
                  {u.displayName} {u.role === 'staff' ? <Badge size="xs">staff</Badge> : null}
                </Table.Td>
                <Table.Td>{u.email}</Table.Td>
                <Table.Td>{u.subscription.planDisplayName}</Table.Td>
                <Table.Td>{new Date(u.createdAt).toLocaleDateString()}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="flex-end">
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => void impersonate(u)}
                      disabled={u.role === 'staff'}
                    >
                      Impersonate
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setAssigning(u)}>
                      Assign plan
                    </Button>
                    <Button size="xs" color="red" variant="light" onClick={() => setDeleting(u)}>
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {users.data && users.data.total > PAGE_SIZE ? (
        <Pagination total={Math.ceil(users.data.total / PAGE_SIZE)} value={page} onChange={setPage} />
      ) : null}
      <AssignPlanModal
        user={assigning}
        onClose={() => setAssigning(null)}
        onAssigned={() => void queryClient.invalidateQueries({ queryKey: ['users'] })}
      />
      <Modal opened={deleting !== null} onClose={() => setDeleting(null)} title="Delete this user?">
        <Text mb="md">
          {deleting?.email} and everything they own (syncs, connections, logs) will be deleted. This cannot be
          undone.
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => setDeleting(null)}>
            Cancel
          </Button>
          <Button color="red" onClick={() => deleting && void remove(deleting)}>
            Delete
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}
