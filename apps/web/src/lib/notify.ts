import { notifications } from '@mantine/notifications';
import { errorText } from './api';

// A list of user-facing messages is joined with blank lines (spec section 8): keep them visible.
const keepLineBreaks = { description: { whiteSpace: 'pre-line' } } as const;

/** Shows an error as a red notification with the text a user should see (spec section 8). */
export function showError(error: unknown, title = 'Error') {
  notifications.show({ color: 'red', title, message: errorText(error), styles: keepLineBreaks });
}

export function showSuccess(message: string) {
  notifications.show({ color: 'green', message });
}
