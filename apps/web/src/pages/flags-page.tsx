import type { ExperimentFlags, UserSummary } from '@lockstep/contract';
import { Alert, Button, Card, Group, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorText } from '../lib/api';

type KnownFlag = { name: string; kind: 'boolean' | 'list'; description: string };

/** Staff: edit one user's experiment flags (booleans, or lists checked for membership). */
export function FlagsPage() {
  const [email, setEmail] = useState('');
  const [userId, setUserId] = useState<string | null>(null);
  const [flags, setFlags] = useState<ExperimentFlags>({});
  const known = useQuery({
    queryKey: ['known-flags'],
    queryFn: () => api<{ flags: KnownFlag[] }>('/rest/flags/known'),
  });
  const found = useQuery({
    queryKey: ['flag-users', email],
    queryFn: () => api<{ items: UserSummary[] }>(`/rest/users?q=${encodeURIComponent(email)}&take=10`),
    enabled: email.length >= 2,
  });

  async function load(id: string | null) {
    setUserId(id);
    setFlags({});
  }

  async function save() {
    if (!userId) return;
    try {
      await api(`/rest/users/${userId}/flags`, { method: 'PUT', body: { experimentFlags: flags } });
      notifications.show({ color: 'green', message: 'Flags saved.' });
    } catch (error) {
      notifications.show({ color: 'red', message: errorText(error) });
    }
  }

  return (
    <Stack maw={720}>
      <Title order={2}>Experiment flags</Title>
      <Text c="dimmed" size="sm">
        Choose a user, set their flags, save. Saving replaces the user's flags with the ones below.
      </Text>
      <TextInput
        label="Find a user"
        placeholder="Email or name"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
      />
      <Select
        label="User"
        placeholder={email.length < 2 ? 'Type at least 2 characters above' : 'Choose a user'}
        data={(found.data?.items ?? []).map((u) => ({ value: u.id, label: `${u.displayName} <${u.email}>` }))}
        value={userId}
        onChange={(v) => void load(v)}
      />
      {known.error ? <Alert color="red">{errorText(known.error)}</Alert> : null}
      {userId ? (
        <Card withBorder>
          <Stack>
            {(known.data?.flags ?? []).map((f) =>
              f.kind === 'boolean' ? (
                <Switch
                  key={f.name}
                  label={f.name}
                  description={f.description}
                  checked={flags[f.name] === true}
                  onChange={(e) => setFlags({ ...flags, [f.name]: e.currentTarget.checked })}
                />
              ) : (
                <TextInput
                  key={f.name}
                  label={f.name}
                  description={`${f.description} Comma separated.`}
                  value={Array.isArray(flags[f.name]) ? (flags[f.name] as string[]).join(', ') : ''}
                  onChange={(e) =>
                    setFlags({
                      ...flags,
                      [f.name]: e.currentTarget.value
                        .split(',')
                        .map((s) => s.trim())
                        .filter(Boolean),
                    })
                  }
                />
              ),
            )}
            <Group justify="flex-end">
              <Button onClick={() => void save()}>Save flags</Button>
            </Group>
          </Stack>
        </Card>
      ) : null}
    </Stack>
  );
}
