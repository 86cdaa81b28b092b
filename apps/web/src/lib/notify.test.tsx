import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { act, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import { showError } from './notify';

const envelope = { statusCode: 400, timestamp: 't', path: '/rest/x', message: 'Validation failed' };

function renderNotifications() {
  render(
    <MantineProvider>
      <Notifications />
    </MantineProvider>,
  );
}

describe('API errors in notifications (spec section 8)', () => {
  it('shows a list of user-facing messages with blank lines between them, line breaks kept', async () => {
    renderNotifications();
    act(() =>
      showError(
        new ApiError(400, { ...envelope, response: { userFacingMessage: ['Name: required', 'Email: bad'] } }),
      ),
    );
    const text = await screen.findByText(/Name: required/);
    expect(text.textContent).toBe('Name: required\n\nEmail: bad');
    expect(getComputedStyle(text).whiteSpace).toBe('pre-line');
  });

  it('falls back to the envelope message, then to the generic text', async () => {
    renderNotifications();
    act(() => showError(new ApiError(400, { ...envelope, response: {} })));
    expect(await screen.findByText('Validation failed')).toBeTruthy();
    act(() => showError(new ApiError(502, '<html>Bad gateway</html>')));
    expect(await screen.findByText('An error occured. Please contact support.')).toBeTruthy();
  });
});
