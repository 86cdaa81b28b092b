import { Alert, Button, Group, Text } from '@mantine/core';
import { authClient } from '../lib/auth-client';
import { showError } from '../lib/notify';

/** Staff acting as a user always see that they are (spec section 6). */
export function ImpersonationBanner({ email }: { email: string }) {
  async function stop() {
    const result = await authClient.admin.stopImpersonating();
    if (result.error) {
      showError(new Error(result.error.message ?? 'Could not stop impersonating.'));
      return;
    }
    window.location.assign('/settings/users');
  }
  return (
    <Alert color="orange" mb="md" title="Impersonating" role="status">
      <Group justify="space-between">
        <Text size="sm">You are acting as {email}. Analytics and support chat are off while you do.</Text>
        <Button size="xs" color="orange" onClick={() => void stop()}>
          Stop impersonating
        </Button>
      </Group>
    </Alert>
  );
}
