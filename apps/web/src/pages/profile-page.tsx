import { Card, Stack, Table, Title } from '@mantine/core';
import { GenericErrorView } from '../components/generic-error-view';
import { errorText } from '../lib/api';
import { useCurrentUser, usePlan } from '../lib/queries';

export function ProfilePage() {
  const user = useCurrentUser();
  const plan = usePlan();
  if (user.error) return <GenericErrorView details={errorText(user.error)} />;
  const me = user.data;
  if (!me) return null;
  const rows: [string, string][] = [
    ['Name', me.displayName],
    ['Email', me.email],
    ['Role', me.role === 'staff' ? 'Staff' : 'User'],
    ['Plan', plan.subscription.planDisplayName],
    ['Member since', new Date(me.lockstepUser.createdAt).toLocaleDateString()],
  ];
  return (
    <Stack maw={640}>
      <Title order={2}>Profile</Title>
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
    </Stack>
  );
}
