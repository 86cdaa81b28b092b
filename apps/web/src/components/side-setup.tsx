import type { ConnectorInfo, CoreBase, ExternalConnection, RequiredItem } from '@lockstep/contract';
import {
  Badge,
  Button,
  Card,
  Divider,
  Group,
  Loader,
  PasswordInput,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';
import { signInWithPopup } from '../lib/oauth';
import {
  useConnections,
  useConnectorInfo,
  useDemoDatabases,
  useInvalidateSync,
  useSandboxApps,
} from '../lib/sync-queries';
import { AppLogo } from './app-logo';
import { ErrorAlert } from './error-alert';

type Side = 'left' | 'right';

/** A form built from a connector's required items; secrets are typed into password fields. */
function ItemsForm({
  items,
  submitLabel,
  busy,
  onSubmit,
  initial = {},
}: {
  items: RequiredItem[];
  submitLabel: string;
  busy: boolean;
  onSubmit: (values: Record<string, string>) => void;
  /** Values the fields start with (a connection's settings being edited). */
  initial?: Record<string, string>;
}) {
  const [values, setValues] = useState<Record<string, string>>(initial);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit(Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '')));
  };
  return (
    <form onSubmit={submit}>
      <Stack gap="xs">
        {items.map((item) => {
          const common = {
            label: item.label,
            description: item.help,
            placeholder: item.placeholder,
            required: !item.optional,
            value: values[item.name] ?? '',
            onChange: (e: { currentTarget: { value: string } }) => {
              const value = e.currentTarget.value;
              setValues((v) => ({ ...v, [item.name]: value }));
            },
          };
          // A choice among options (TLS mode, change capture): picked, not typed.
          if (item.kind === 'select' && item.options)
            return (
              <Select
                key={item.name}
                label={item.label}
                description={item.help}
                placeholder={item.placeholder ?? (item.optional ? 'Default' : 'Choose one')}
                required={!item.optional}
                clearable={item.optional}
                data={item.options}
                value={values[item.name] ?? null}
                onChange={(value) => setValues((v) => ({ ...v, [item.name]: value ?? '' }))}
              />
            );
          if (item.kind === 'multiline')
            return <Textarea key={item.name} {...common} autosize minRows={2} maxRows={8} />;
          return item.secret || item.kind === 'password' ? (
            <PasswordInput key={item.name} {...common} />
          ) : (
            <TextInput key={item.name} {...common} type={item.kind === 'number' ? 'number' : 'text'} />
          );
        })}
        <Group>
          <Button type="submit" loading={busy}>
            {submitLabel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** A connection's TLS items, editable once it exists (a Supabase connection made by signing in). */
const TLS_ITEMS = new Set(['ssl', 'sslRootCert']);

/**
 * The TLS settings of an existing connection (the database's TLS mode and CA certificate), changed
 * in place: a Supabase database's certificate is first checked when a base is chosen, so this is
 * where its CA certificate is given, or the opt-out chosen. Cleared fields are removed.
 */
function ConnectionTlsSettings({
  connection,
  info,
}: {
  connection: ExternalConnection;
  info: ConnectorInfo;
}) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const items = info.auth.requiredItems.filter((i) => TLS_ITEMS.has(i.name));
  const save = useMutation({
    mutationFn: (values: Record<string, string>) =>
      api<ExternalConnection>(`/rest/external-connections/${connection.id}`, {
        method: 'PATCH',
        body: { connectionItems: Object.fromEntries(items.map((i) => [i.name, values[i.name] ?? null])) },
      }),
    onSuccess: () => {
      showSuccess(`The TLS settings of ${connection.name} are saved.`);
      setOpen(false);
      return client.invalidateQueries({ queryKey: ['external-connections'] });
    },
  });
  if (items.length === 0) return null;
  // Stored values the choices no longer offer (a simulator's disable) start empty.
  const initial = Object.fromEntries(
    items.flatMap((i) => {
      const value = connection.connectionItems[i.name];
      if (value === undefined || (i.kind === 'select' && !i.options?.includes(value))) return [];
      return [[i.name, value]];
    }),
  );
  if (!open)
    return (
      <Group>
        <Button variant="subtle" size="compact-sm" onClick={() => setOpen(true)}>
          Database TLS settings
        </Button>
      </Group>
    );
  return (
    <Card withBorder padding="sm">
      <Stack gap="xs">
        {save.error ? <ErrorAlert error={save.error} title="Could not save the TLS settings" /> : null}
        <ItemsForm
          items={items}
          initial={initial}
          submitLabel="Save TLS settings"
          busy={save.isPending}
          onSubmit={(values) => save.mutate(values)}
        />
      </Stack>
    </Card>
  );
}

/** Step 3: which base (database schema, workspace, spreadsheet) of the connection to sync. */
function ChooseBase({
  coreBase,
  side,
  connection,
  info,
}: {
  coreBase: CoreBase;
  side: Side;
  connection: ExternalConnection;
  info: ConnectorInfo;
}) {
  const invalidate = useInvalidateSync();
  const previews = useQuery({
    queryKey: ['base-previews', connection.id],
    queryFn: () =>
      api<{ basePreviews: { remoteId: string; name: string }[] }>(
        `/rest/external-connections/${connection.id}/fetch-base-previews`,
        { method: 'PATCH', body: {} },
      ),
  });
  const [chosen, setChosen] = useState<string | null>(null);
  const bases = previews.data?.basePreviews ?? [];
  const remoteId = chosen ?? (bases.length === 1 ? (bases[0]?.remoteId ?? null) : null);
  const attach = useMutation({
    mutationFn: (extras: Record<string, string>) => {
      const preview = bases.find((b) => b.remoteId === remoteId);
      return api<CoreBase>('/rest/external-bases', {
        method: 'POST',
        body: {
          type: connection.type,
          name: bases.length > 1 && preview ? `${connection.name} · ${preview.name}` : connection.name,
          remoteId,
          coreBaseId: coreBase.id,
          externalConnectionId: connection.id,
          side,
          extras,
        },
      });
    },
    onSuccess: () => {
      showSuccess(`${connection.name} is connected; its tables were read.`);
      return invalidate(coreBase.id);
    },
    onError: (e) => showError(e, 'Could not use this base'),
  });

  // One base and nothing to ask: it is the user's choice already, so it is used without a click.
  const onlyChoice = bases.length === 1 && info.requiredBaseExtras.length === 0;
  const autoAttached = useRef(false);
  useEffect(() => {
    if (!onlyChoice || autoAttached.current) return;
    autoAttached.current = true;
    attach.mutate({});
  }, [onlyChoice, attach]);

  if (previews.isLoading || (onlyChoice && !attach.isError))
    return (
      <Group gap="xs">
        <Loader size="xs" />
        <Text size="sm">
          {previews.isLoading
            ? `Looking at what ${connection.name} holds…`
            : `Reading the tables of ${bases[0]?.name ?? connection.name}…`}
        </Text>
      </Group>
    );
  if (previews.error)
    return <ErrorAlert error={previews.error} title={`Could not reach ${connection.name}`} />;
  if (bases.length === 0) return <Text size="sm">This connection has no bases Lockstep can read.</Text>;
  const kind = info.connectorType === 'postgresql' ? 'schema' : 'base';
  return (
    <Stack gap="xs">
      <Select
        label={kind === 'schema' ? 'Schema' : 'Base'}
        // Several bases and none chosen yet: say so, instead of an empty box with nothing to click.
        placeholder={`Choose a ${kind}`}
        description={
          bases.length > 1 && !remoteId
            ? `${connection.name} holds ${bases.length} ${kind}s: choose the one to sync.`
            : undefined
        }
        data={bases.map((b) => ({ value: b.remoteId, label: b.name }))}
        value={remoteId}
        onChange={setChosen}
        allowDeselect={false}
      />
      {remoteId ? (
        <ItemsForm
          items={info.requiredBaseExtras}
          submitLabel={`Use ${bases.find((b) => b.remoteId === remoteId)?.name ?? 'this base'}`}
          busy={attach.isPending}
          onSubmit={(extras) => attach.mutate(extras)}
        />
      ) : null}
      {info.connectorType === 'supabase' ? (
        <ConnectionTlsSettings connection={connection} info={info} />
      ) : null}
    </Stack>
  );
}

/** Step 2: a connection to the chosen app: a demo database, an existing connection, or a new one. */
function ChooseConnection({
  info,
  onChosen,
}: {
  info: ConnectorInfo;
  onChosen: (connection: ExternalConnection) => void;
}) {
  const client = useQueryClient();
  const connections = useConnections(info.connectorType);
  const demos = useDemoDatabases();
  const sandboxes = useSandboxApps();
  const connectSandbox = useMutation({
    mutationFn: () =>
      api<ExternalConnection>(`/rest/sandbox-apps/${info.connectorType}/connect`, { method: 'POST' }),
    onSuccess: (c) => {
      void client.invalidateQueries({ queryKey: ['external-connections'] });
      onChosen(c);
    },
    onError: (e) => showError(e, 'Could not connect the sandbox'),
  });
  const connectDemo = useMutation({
    mutationFn: (name: string) =>
      api<ExternalConnection>(`/rest/demo-databases/${name}/connect`, { method: 'POST' }),
    onSuccess: (c) => {
      void client.invalidateQueries({ queryKey: ['external-connections'] });
      onChosen(c);
    },
    onError: (e) => showError(e, 'Could not connect the demo database'),
  });
  const create = useMutation({
    mutationFn: (connectionItems: Record<string, string>) =>
      api<ExternalConnection>('/rest/external-connections', {
        method: 'POST',
        body: { type: info.connectorType, connectionItems },
      }),
    onSuccess: (c) => {
      void client.invalidateQueries({ queryKey: ['external-connections'] });
      onChosen(c);
    },
  });
  const oauth = useMutation({
    mutationFn: () => signInWithPopup(info.connectorType),
    onSuccess: (c) => {
      void client.invalidateQueries({ queryKey: ['external-connections'] });
      onChosen(c);
    },
  });
  const existing = connections.data?.items ?? [];
  const showDemos = info.connectorType === 'postgresql' && demos.data?.available;
  const sandbox = sandboxes.data?.items.find((i) => i.connectorType === info.connectorType);

  return (
    <Stack gap="sm">
      {showDemos ? (
        <Stack gap={6}>
          <Text size="sm" fw={600}>
            Try it on sample data
          </Text>
          <Group gap="xs">
            {demos.data?.items.map((d) => (
              <Button
                key={d.name}
                variant="light"
                loading={connectDemo.isPending && connectDemo.variables === d.name}
                onClick={() => connectDemo.mutate(d.name)}
                title={d.description}
              >
                Use {d.displayName}
              </Button>
            ))}
          </Group>
        </Stack>
      ) : null}
      {sandbox ? (
        <Stack gap={6}>
          <Text size="sm" fw={600}>
            No {info.displayName} account at hand?
          </Text>
          <Group gap="xs">
            <Button
              variant="light"
              loading={connectSandbox.isPending}
              onClick={() => connectSandbox.mutate()}
              title={sandbox.description}
            >
              Use the {info.displayName} Sandbox
            </Button>
          </Group>
        </Stack>
      ) : null}
      {existing.length > 0 ? (
        <Select
          label="Use an existing connection"
          placeholder="Choose a connection"
          data={existing.map((c) => ({
            value: c.id,
            label: c.status === 'broken' ? `${c.name} (needs attention)` : c.name,
          }))}
          onChange={(id) => {
            const c = existing.find((x) => x.id === id);
            if (c) onChosen(c);
          }}
        />
      ) : null}
      {(showDemos || existing.length > 0) && info.connectorType !== 'blended' ? (
        <Divider label="or connect a new one" labelPosition="left" />
      ) : null}
      {info.auth.type === 'oauth2' && info.auth.signInAvailable === false ? (
        <Text size="sm" c="dimmed" data-testid="sign-in-not-set-up">
          Signing in with {info.displayName} is not set up on this server (the administrator sets its OAuth
          client id, see the README's configuration).
          {info.auth.requiredItems.length > 0 ? ' Connect with a token instead:' : ''}
        </Text>
      ) : null}
      {info.auth.type === 'oauth2' && info.auth.signInAvailable !== false ? (
        <Stack gap={6}>
          <Group>
            <Button loading={oauth.isPending} onClick={() => oauth.mutate()}>
              Sign in with {info.displayName}
            </Button>
          </Group>
          {oauth.error ? <ErrorAlert error={oauth.error} title={`${info.displayName} sign-in`} /> : null}
        </Stack>
      ) : null}
      {info.connectorType === 'blended' ? (
        <Text size="sm" c="dimmed">
          Lockstep made this connection with your first blended table; make more on the Blended tables page.
        </Text>
      ) : null}
      {info.connectorType === 'blended' ||
      (info.auth.type === 'oauth2' &&
        info.auth.requiredItems.length === 0 &&
        info.auth.signInAvailable !== false) ? null : (
        <>
          {create.error ? (
            <ErrorAlert error={create.error} title={`Could not connect to ${info.displayName}`} />
          ) : null}
          <ItemsForm
            items={
              // With OAuth apps the token is the alternative to signing in (a personal token), so
              // it is required here; other items (Supabase's database TLS) stay optional.
              info.auth.type === 'oauth2'
                ? info.auth.requiredItems.map((i) => (i.kind === 'password' ? { ...i, optional: false } : i))
                : info.auth.requiredItems
            }
            submitLabel={`Connect ${info.displayName}`}
            busy={create.isPending}
            onSubmit={(items) => create.mutate(items)}
          />
        </>
      )}
    </Stack>
  );
}

/** The virtual app whose base "Blended tables" holds the user's blended tables (page Blended tables). */
const BLENDED_APP: ConnectorInfo = {
  displayName: 'Blended tables',
  connectorType: 'blended',
  auth: { type: 'connection_items', requiredItems: [] },
  requiredBaseExtras: [],
  isInBeta: true,
  available: true,
  unavailableReason: null,
};

/**
 * One side of a sync: the app, a connection to it and the base to sync. Once chosen, the base
 * shows with its tables; the schema can be read again after changes in the app.
 */
export function SideSetup({ coreBase, side }: { coreBase: CoreBase; side: Side }) {
  const catalog = useConnectorInfo();
  // The user's blended tables are an app of their own once they have one (its connection is Lockstep's).
  const blended = useConnections('blended');
  const infos = {
    ...catalog,
    data: catalog.data
      ? [...catalog.data, ...((blended.data?.items.length ?? 0) > 0 ? [BLENDED_APP] : [])]
      : undefined,
  };
  const invalidate = useInvalidateSync();
  const [type, setType] = useState<string | null>(null);
  const [connection, setConnection] = useState<ExternalConnection | null>(null);
  const attached = side === 'left' ? coreBase.leftExternalBase : coreBase.rightExternalBase;
  const title = side === 'left' ? 'First app' : 'Second app';
  const refresh = useMutation({
    mutationFn: (id: string) =>
      api(`/rest/external-bases/${id}/update-table-previews`, { method: 'PATCH', body: {} }),
    onSuccess: () => {
      showSuccess('The tables and fields were read again.');
      return invalidate(coreBase.id);
    },
    onError: (e) => showError(e, 'Could not read the schema'),
  });

  if (attached) {
    const info = infos.data?.find((i) => i.connectorType === attached.connectorInfo.connectorType);
    return (
      <Card withBorder padding="lg" data-testid={`side-${side}`}>
        <Stack gap="xs">
          <Group justify="space-between">
            <Title order={4}>{title}</Title>
            <Badge color="green" variant="light">
              Connected
            </Badge>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <AppLogo type={attached.type} name={info?.displayName} size={16} />
            <Text fw={600}>{attached.name}</Text>
          </Group>
          <Text size="sm" c="dimmed">
            {info?.displayName ?? attached.type} · {attached.externalTables.length} table
            {attached.externalTables.length === 1 ? '' : 's'}:{' '}
            {attached.externalTables.map((t) => t.name).join(', ') || 'none'}
          </Text>
          <Group>
            <Button
              variant="default"
              size="xs"
              loading={refresh.isPending}
              onClick={() => refresh.mutate(attached.id)}
            >
              Read tables again
            </Button>
          </Group>
        </Stack>
      </Card>
    );
  }

  const info = infos.data?.find((i) => i.connectorType === type) ?? null;
  return (
    <Card withBorder padding="lg" data-testid={`side-${side}`}>
      <Stack gap="sm">
        <Title order={4}>{title}</Title>
        {infos.isLoading ? <Loader size="sm" aria-label="Loading apps" /> : null}
        {infos.error ? <ErrorAlert error={infos.error} title="Could not load the apps" /> : null}
        {infos.data ? (
          <Select
            label="App"
            placeholder="Choose an app"
            searchable
            data={infos.data.map((i) => ({
              value: i.connectorType,
              label: i.available
                ? `${i.displayName}${i.isInBeta ? ' (beta)' : ''}`
                : `${i.displayName} (coming soon)`,
              disabled: !i.available,
            }))}
            renderOption={({ option }) => (
              <Group gap="xs" wrap="nowrap">
                <AppLogo
                  type={option.value}
                  name={infos.data?.find((i) => i.connectorType === option.value)?.displayName}
                  size={16}
                />
                <span>{option.label}</span>
              </Group>
            )}
            leftSection={type ? <AppLogo type={type} name={info?.displayName} size={16} /> : null}
            value={type}
            onChange={(v) => {
              setType(v);
              setConnection(null);
            }}
          />
        ) : null}
        {info && !connection ? <ChooseConnection info={info} onChosen={setConnection} /> : null}
        {info && connection ? (
          <Stack gap="xs">
            <Group gap="xs">
              <Text size="sm">
                Connection: <b>{connection.name}</b>
              </Text>
              <Button variant="subtle" size="compact-xs" onClick={() => setConnection(null)}>
                Change
              </Button>
            </Group>
            <ChooseBase coreBase={coreBase} side={side} connection={connection} info={info} />
          </Stack>
        ) : null}
      </Stack>
    </Card>
  );
}
