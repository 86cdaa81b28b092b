import { Button, Card, Group, PasswordInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { GenericErrorView } from '../components/generic-error-view';
import { errorText } from '../lib/api';
import { authClient } from '../lib/auth-client';
import { showError, showSuccess } from '../lib/notify';
import { useCurrentUser, usePlan } from '../lib/queries';
import { useSession } from '../lib/session';

/** better-auth's client answers { error } instead of throwing: a failure becomes an Error with its message. */
async function orThrow<T extends { error: { message?: string } | null }>(call: Promise<T>): Promise<T> {
  const r = await call;
  if (r.error) throw new Error(r.error.message || 'The server refused the change.');
  return r;
}

/** /settings/profile: who you are, your name and password to change, and signing out. */
export function ProfilePage() {
  const user = useCurrentUser();
  const plan = usePlan();
  const { signOut } = useSession();
  const client = useQueryClient();
  const [name, setName] = useState<string | null>(null);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const rename = useMutation({
    mutationFn: (value: string) => orThrow(authClient.updateUser({ name: value })),
    onSuccess: () => {
      showSuccess('Your name is saved.');
      setName(null);
      return client.invalidateQueries({ queryKey: ['current-user'] });
    },
    onError: (e) => showError(e, 'Could not save your name'),
  });
  const password = useMutation({
    mutationFn: () =>
      orThrow(
        authClient.changePassword({ currentPassword: current, newPassword: next, revokeOtherSessions: true }),
      ),
    onSuccess: () => {
      showSuccess('Your password is changed; other devices are signed out.');
      setCurrent('');
      setNext('');
    },
    onError: (e) => showError(e, 'Could not change your password'),
  });
  if (user.error) return <GenericErrorView details={errorText(user.error)} />;
  const me = user.data;
  if (!me) return null;
  const rows: [string, string][] = [
    ['Email', me.email],
    ['Role', me.role === 'staff' ? 'Staff' : 'User'],
    ['Plan', plan.subscription.planDisplayName],
    ['Member since', new Date(me.lockstepUser.createdAt).toLocaleDateString()],
  ];
  const shownName = name ?? me.displayName;
  const saveName = (e: FormEvent) => {
    e.preventDefault();
    if (shownName.trim()) rename.mutate(shownName.trim());
  };
  const savePassword = (e: FormEvent) => {
    e.preventDefault();
    password.mutate();
  };
  return (
    <Stack maw={640}>
      <Group justify="space-between">
        <Title order={2}>Profile</Title>
        <Button variant="default" onClick={() => void signOut()}>
          Sign out
        </Button>
      </Group>
      <Card withBorder>
        <form onSubmit={saveName}>
          <Group align="end">
            <TextInput
              label="Name"
              value={shownName}
              onChange={(e) => setName(e.currentTarget.value)}
              style={{ flex: 1 }}
              required
              maxLength={200}
            />
            <Button type="submit" loading={rename.isPending} disabled={shownName.trim() === me.displayName}>
              Save name
            </Button>
          </Group>
        </form>
      </Card>
      <Card withBorder>
        <Table>
          <Table.Tbody>
            {rows.map(([k, v]) => (
              <Table.Tr key={k}>
                <Table.Th w={160}>{k}</Table.Th>
                <Table.Td>{v}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
      <Card withBorder>
        <form onSubmit={savePassword}>
          <Stack gap="sm">
            <Title order={4}>Password</Title>
            <PasswordInput
              label="Current password"
              value={current}
              onChange={(e) => setCurrent(e.currentTarget.value)}
              autoComplete="current-password"
              required
            />
            <PasswordInput
              label="New password"
              value={next}
              onChange={(e) => setNext(e.currentTarget.value)}
              autoComplete="new-password"
              required
            />
            <Text size="xs" c="dimmed">
              A password others cannot guess: common words and patterns are refused.
            </Text>
            <Group>
              <Button type="submit" loading={password.isPending} disabled={!current || !next}>
                Change password
              </Button>
            </Group>
          </Stack>
        </form>
      </Card>
    </Stack>
  );
}
