import { isBaseLimitReached, type LimitData, type Subscription } from '@lockstep/contract';
import { Badge, Group, Menu, Text, Title, Tooltip, UnstyledButton } from '@mantine/core';
import { Link } from 'react-router';
import { imageAttributes } from '../lib/images';

function usageLabel(limits: LimitData): string {
  return `${limits.baseCount} of ${limits.baseLimit === null ? 'unlimited' : limits.baseLimit} syncs`;
}

/** Brand, plan and usage badges, and the account menu with sign out. */
export function AppHeader({
  displayName,
  subscription,
  limits,
  onSignOut,
}: {
  displayName: string;
  subscription: Subscription;
  limits: LimitData | null;
  onSignOut: () => void;
}) {
  return (
    <Group h="100%" px="md" justify="space-between">
      <Group gap="xs">
        {/* Vector: one file at every size, so no srcset; 32 is an icon size of spec section 9. */}
        <img alt="" {...imageAttributes({ src: '/logo.svg', width: 32, height: 32 })} />
        <Title order={4}>Lockstep</Title>
        <Badge
          variant="light"
          color={subscription.status === 'expired' ? 'red' : subscription.status === 'none' ? 'gray' : 'blue'}
          component={Link}
          to="/subscription/manage"
          style={{ cursor: 'pointer' }}
        >
          {subscription.planDisplayName}
          {subscription.status === 'expired' ? ' (expired)' : ''}
        </Badge>
        {limits ? (
          <Tooltip
            label={`${limits.recordCount.toLocaleString()} of ${limits.recordLimit.toLocaleString()} records`}
          >
            <Badge variant="outline" color={isBaseLimitReached(limits) ? 'red' : 'gray'}>
              {usageLabel(limits)}
            </Badge>
          </Tooltip>
        ) : null}
      </Group>
      <Menu position="bottom-end">
        <Menu.Target>
          <UnstyledButton aria-label="Account menu">
            <Text size="sm" fw={500}>
              {displayName} ▾
            </Text>
          </UnstyledButton>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Item component={Link} to="/settings/profile">
            Profile
          </Menu.Item>
          <Menu.Item component={Link} to="/subscription/manage">
            Subscription
          </Menu.Item>
          <Menu.Item component={Link} to="/developer">
            Developer
          </Menu.Item>
          <Menu.Divider />
          <Menu.Item onClick={onSignOut}>Sign out</Menu.Item>
        </Menu.Dropdown>
      </Menu>
    </Group>
  );
}
