import { MantineProvider } from '@mantine/core';
import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SignUpPage } from './auth-form';

const signUpEmail = vi.fn();
vi.mock('../lib/auth-client', () => ({
  authClient: { signUp: { email: (...args: unknown[]) => signUpEmail(...args) }, signIn: { email: vi.fn() } },
}));

function renderSignUp(url = '/sign-up') {
  const router = createMemoryRouter(
    [
      { path: '/sign-up', element: <SignUpPage /> },
      { path: '/sign-in', element: <p>sign-in page</p> },
    ],
    { initialEntries: [url] },
  );
  render(
    <MantineProvider>
      <RouterProvider router={router} />
    </MantineProvider>,
  );
}

async function fillAndSubmit(email: string) {
  fireEvent.change(screen.getByLabelText(/Email/), { target: { value: email } });
  fireEvent.change(screen.getByLabelText(/Password/), { target: { value: 'correct-horse-battery' } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
}

describe('the sign-up page', () => {
  afterEach(() => {
    sessionStorage.clear();
    signUpEmail.mockReset();
    vi.unstubAllGlobals();
  });

  it('asks to check the email when sign-up made no session (verification on)', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    signUpEmail.mockResolvedValue({ data: { token: null, user: { id: 'x' } }, error: null });
    renderSignUp('/sign-up?redirect_url=%2Faccount%2Fsignup%2Fpro');
    await fillAndSubmit('sam@example.com');
    expect(await screen.findByRole('heading', { name: 'Check your email' })).toBeTruthy();
    expect(screen.getByText('sam@example.com')).toBeTruthy();
    expect(signUpEmail).toHaveBeenCalledWith(
      expect.objectContaining({ email: 'sam@example.com', callbackURL: '/account/signup/pro' }),
    );
    expect(assign).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('link', { name: 'Back to sign in' }));
    expect(await screen.findByText('sign-in page')).toBeTruthy();
  });

  it('enters the app when sign-up signed in (local mode), and shows errors', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    signUpEmail.mockResolvedValueOnce({
      data: null,
      error: { message: 'This password is too easy to guess.', status: 400 },
    });
    renderSignUp();
    await fillAndSubmit('sam@example.com');
    expect((await screen.findByRole('alert')).textContent).toMatch(/too easy to guess/);
    signUpEmail.mockResolvedValueOnce({ data: { token: 'session-token', user: { id: 'x' } }, error: null });
    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('/syncs'));
    expect(screen.queryByText('Check your email')).toBeNull();
    // The sign-in is tracked (as the user, once the app knows them: lib/analytics.ts).
    expect(sessionStorage.getItem('lockstep.analytics.signedIn')).toBe('sign_up');
  });

  it('does not track a sign-in while the email still needs confirming', async () => {
    vi.stubGlobal('location', { ...window.location, assign: vi.fn() });
    signUpEmail.mockResolvedValue({ data: { token: null, user: { id: 'x' } }, error: null });
    renderSignUp();
    await fillAndSubmit('sam@example.com');
    await screen.findByRole('heading', { name: 'Check your email' });
    expect(sessionStorage.getItem('lockstep.analytics.signedIn')).toBeNull();
  });
});
