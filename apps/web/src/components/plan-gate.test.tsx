import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { renderWithMantine } from '../test/render';
import { PlanGateModal } from './plan-gate';

describe('plan gate modal', () => {
  it('has the exact title, a Choose Plan link and a Switch Accounts button', () => {
    const onSwitch = vi.fn();
    renderWithMantine(<PlanGateModal choosePlanHref="/account/signup" onSwitchAccounts={onSwitch} />);
    expect(screen.getByText('Choose a plan to get started')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Choose Plan' }).getAttribute('href')).toBe('/account/signup');
    fireEvent.click(screen.getByRole('button', { name: 'Switch Accounts' }));
    expect(onSwitch).toHaveBeenCalledOnce();
  });

  it('cannot be dismissed: no close button, Escape does nothing', () => {
    renderWithMantine(<PlanGateModal choosePlanHref="/x" onSwitchAccounts={() => {}} />);
    expect(screen.queryByRole('button', { name: /close/i })).toBeNull();
    fireEvent.keyDown(document.body, { key: 'Escape' });
    expect(screen.getByText('Choose a plan to get started')).toBeTruthy();
  });
});
