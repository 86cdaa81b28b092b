import type { CurrentUser } from '@lockstep/contract';
import { render } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { resetSupportChatForTests, SUPPORT_CHAT_SCRIPT_ID, shutdownSupportChat } from '../lib/support-chat';
import { SupportChat } from './support-chat';

function user(impersonatedBy: string | null): CurrentUser {
  return {
    id: 'u1',
    displayName: 'Ada',
    email: 'ada@example.test',
    role: 'user',
    impersonatedBy,
    lockstepUser: { createdAt: '2026-01-02T00:00:00.000Z', intercomHash: 'hmac-of-u1' },
  } as unknown as CurrentUser;
}
const script = () => document.getElementById(SUPPORT_CHAT_SCRIPT_ID) as HTMLScriptElement | null;
type ChatWindow = { Intercom?: ((...args: unknown[]) => void) & { q?: unknown[][] } };
const intercom = () => (window as unknown as ChatWindow).Intercom;

describe('the support chat', () => {
  beforeEach(() => resetSupportChatForTests());

  it('loads Intercom lazily with the user and their user_hash when configured', () => {
    expect(script()).toBeNull();
    render(<SupportChat settings={{ kind: 'intercom', appId: 'app123' }} me={user(null)} />);
    expect(script()?.src).toBe('https://widget.intercom.io/widget/app123');
    expect(script()?.async).toBe(true);
    expect(intercom()?.q).toEqual([
      [
        'boot',
        {
          app_id: 'app123',
          user_id: 'u1',
          user_hash: 'hmac-of-u1',
          email: 'ada@example.test',
          name: 'Ada',
          created_at: Date.parse('2026-01-02T00:00:00.000Z') / 1000,
        },
      ],
    ]);
    shutdownSupportChat();
    expect(intercom()?.q?.at(-1)).toEqual(['shutdown']);
  });

  it('is not loaded while staff impersonate the user', () => {
    render(<SupportChat settings={{ kind: 'intercom', appId: 'app123' }} me={user('staff-1')} />);
    expect(script()).toBeNull();
    expect(intercom()).toBeUndefined();
  });

  it('is not loaded when no chat is configured', () => {
    render(<SupportChat settings={null} me={user(null)} />);
    expect(script()).toBeNull();
    expect(document.querySelectorAll('script')).toHaveLength(0);
  });

  it('loads Chatwoot from its instance and sets the user with the identifier hash', () => {
    const run = vi.fn();
    const setUser = vi.fn();
    render(
      <SupportChat
        settings={{ kind: 'chatwoot', websiteToken: 'tok', baseUrl: 'https://chat.example.test' }}
        me={user(null)}
      />,
    );
    expect(script()?.src).toBe('https://chat.example.test/packs/js/sdk.js');
    Object.assign(window, { chatwootSDK: { run }, $chatwoot: { setUser, reset: vi.fn() } });
    script()?.onload?.(new Event('load'));
    expect(run).toHaveBeenCalledWith({ websiteToken: 'tok', baseUrl: 'https://chat.example.test' });
    window.dispatchEvent(new Event('chatwoot:ready'));
    expect(setUser).toHaveBeenCalledWith('u1', {
      email: 'ada@example.test',
      name: 'Ada',
      identifier_hash: 'hmac-of-u1',
    });
  });
});
