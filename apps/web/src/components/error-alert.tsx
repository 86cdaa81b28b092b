import { Alert } from '@mantine/core';
import { errorText } from '../lib/api';

/** An inline error with the text a user should see; blank lines between messages stay visible. */
export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  return (
    <Alert color="red" title={title} role="alert" style={{ whiteSpace: 'pre-line' }}>
      {errorText(error)}
    </Alert>
  );
}
