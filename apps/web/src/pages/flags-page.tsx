import type { ExperimentFlags, UserSummary } from '@lockstep/contract';
import {
  Alert,
  Button,
  Card,
  Group,
  Loader,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../components/error-alert';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import type { Paged } from '../lib/paged';

type KnownFlag = { name: string; kind: 'boolean' | 'list'; description: string };
// The user summary carries the flags once the server reports them (asked of the contract).
type UserWithFlags = UserSummary & { experimentFlags?: ExperimentFlags };

function FlagEditor({
  flag,
  value,
  onChange,
}: {
  flag: KnownFlag;
  value: ExperimentFlags[string] | undefined;
  onChange: (value: ExperimentFlags[string]) => void;
}) {
  if (flag.kind === 'boolean') {
    return (
      <Switch
        label={flag.name}
        description={flag.description}
        checked={value === true}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
    );
  }
  return (
    <TextInput
      label={flag.name}
      description={`${flag.description} Comma separated.`}
      value={Array.isArray(value) ? value.join(', ') : ''}
      onChange={(e) =>
        onChange(
          e.currentTarget.value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        )
      }
    />
  );
}

/** Staff: edit one user's experiment flags (booleans, or lists checked for membership). */
export function FlagsPage() {
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 250);
  const [chosen, setChosen] = useState<UserSummary | null>(null);
  const userId = chosen?.id ?? null;
  const [flags, setFlags] = useState<ExperimentFlags>({});
  const [busy, setBusy] = useState(false);
  const known = useQuery({
    queryKey: ['known-flags'],
    queryFn: () => api<{ flags: KnownFlag[] }>('/rest/flags/known'),
  });
  const found = useQuery({
    queryKey: ['flag-users', debounced],
    queryFn: () => api<Paged<UserSummary>>(`/rest/users?q=${encodeURIComponent(debounced)}&take=10`),
  });
  const [reportsFlags, setReportsFlags] = useState(true);

  async function choose(summary: UserSummary) {
    setChosen(summary);
    setFlags({});
    try {
      const user = await api<UserWithFlags>(`/rest/users/${summary.id}`);
      setReportsFlags(user.experimentFlags !== undefined);
      setFlags(user.experimentFlags ?? {});
    } catch (error) {
      showError(error, 'Could not load this user');
    }
  }

  async function save() {
    if (!userId) return;
    setBusy(true);
    try {
      await api(`/rest/users/${userId}/flags`, { method: 'PUT', body: { experimentFlags: flags } });
      showSuccess('Flags saved.');
    } catch (error) {
      showError(error, 'Could not save the flags');
    } finally {
      setBusy(false);
    }
  }

  return (
    <Stack maw={720}>
      <Title order={2}>Experiment flags</Title>
      <Text c="dimmed" size="sm">
        Find a user, set their flags, save. Saving replaces the user's flags with the ones below.
      </Text>
      <TextInput
        label="Find a user"
        placeholder="Email or name"
        value={search}
        onChange={(e) => setSearch(e.currentTarget.value)}
      />
      {found.error ? <ErrorAlert error={found.error} title="Could not search the users" /> : null}
      {found.isLoading ? <Loader size="sm" aria-label="Searching" /> : null}
      {found.data?.items.length === 0 ? <Text c="dimmed">No users match.</Text> : null}
      {found.data && found.data.items.length > 0 ? (
        <Table>
          <Table.Tbody>
            {found.data.items.map((u) => (
              <Table.Tr key={u.id} bg={u.id === userId ? 'blue.0' : undefined}>
                <Table.Td>{u.displayName}</Table.Td>
                <Table.Td>{u.email}</Table.Td>
                <Table.Td ta="right">
                  <Button size="xs" variant="default" onClick={() => void choose(u)}>
                    Edit flags
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {known.isLoading ? <Loader size="sm" /> : null}
      {known.error ? <ErrorAlert error={known.error} title="Could not load the known flags" /> : null}
      {userId && !reportsFlags ? (
        <Alert color="yellow">
          The server does not report this user's current flags: saving sets exactly the flags below.
        </Alert>
      ) : null}
      {chosen && known.data ? (
        <Card withBorder>
          <Stack>
            <Text fw={600}>Flags of {chosen.email}</Text>
            {known.data.flags.map((f) => (
              <FlagEditor
                key={f.name}
                flag={f}
                value={flags[f.name]}
                onChange={(value) => setFlags((current) => ({ ...current, [f.name]: value }))}
              />
            ))}
            <Group justify="flex-end">
              <Button onClick={() => void save()} loading={busy}>
                Save flags
              </Button>
            </Group>
          </Stack>
        </Card>
      ) : null}
    </Stack>
  );
}
