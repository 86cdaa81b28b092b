import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError, errorText } from '../lib/api';
import { renderWithMantine } from '../test/render';
import { GenericErrorView } from './generic-error-view';
import { SomethingWentWrong } from './something-went-wrong';

describe('error views', () => {
  it('shows the Something went wrong screen with the support email and both actions', () => {
    const retry = vi.fn();
    renderWithMantine(<SomethingWentWrong supportEmail="help@lockstep.test" onRetry={retry} />);
    expect(screen.getByText('Something went wrong')).toBeTruthy();
    expect(
      screen.getByText(
        'There was a problem loading the page. If this continues, please reach out to us at help@lockstep.test.',
      ),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Return to dashboard' }).getAttribute('href')).toBe('/syncs');
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(retry).toHaveBeenCalledOnce();
  });

  it('toggles the details of the generic error view', () => {
    renderWithMantine(<GenericErrorView details="stack trace here" />);
    expect(screen.getByRole('alert').textContent).toContain(
      'An error has occured. If the error persists, please visit our Support Page.',
    );
    fireEvent.click(screen.getByRole('button', { name: 'Show details' }));
    expect(screen.getByRole('button', { name: 'Hide details' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Reload' })).toBeTruthy();
  });

  it('shows an API error by the rules of spec section 8', () => {
    const env = { statusCode: 400, timestamp: 't', path: '/rest/x', message: 'Validation failed' };
    expect(
      errorText(new ApiError(400, { ...env, response: { userFacingMessage: ['a: bad', 'b: worse'] } })),
    ).toBe('a: bad\n\nb: worse');
    expect(errorText(new ApiError(400, { ...env, response: {} }))).toBe('Validation failed');
    expect(errorText(new ApiError(502, '<html>bad gateway</html>'))).toBe(
      'An error occured. Please contact support.',
    );
  });
});
