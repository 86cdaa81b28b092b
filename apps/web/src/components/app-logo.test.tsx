import type { CoreBase } from '@lockstep/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { siAirtable, siGooglesheets } from 'simple-icons';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWithMantine } from '../test/render';
import { AppLogo } from './app-logo';
import { SideSetup } from './side-setup';

const info = (connectorType: string, displayName: string, available = true) => ({
  displayName,
  connectorType,
  auth: { type: 'connection_items', requiredItems: [] },
  requiredBaseExtras: [],
  isInBeta: false,
  available,
  unavailableReason: available ? null : 'Not built yet',
});

afterEach(() => vi.unstubAllGlobals());

describe('AppLogo', () => {
  it("draws a known app's simple-icons path in its brand colour", () => {
    const { container } = renderWithMantine(<AppLogo type="airtable" size={24} />);
    const svg = container.querySelector('svg[data-app-logo="airtable"]') as SVGElement;
    expect(svg).not.toBeNull();
    expect(svg.getAttribute('fill')).toBe(`#${siAirtable.hex}`);
    // 24 is no icon size of spec section 9: rounded up to 32.
    expect(svg.getAttribute('width')).toBe('32');
    expect(svg.getAttribute('height')).toBe('32');
    expect(svg.querySelector('path')?.getAttribute('d')).toBe(siAirtable.path);
  });

  it('maps the connector type to its icon (google_sheets → Google Sheets)', () => {
    const { container } = renderWithMantine(<AppLogo type="google_sheets" />);
    expect(container.querySelector('path')?.getAttribute('d')).toBe(siGooglesheets.path);
  });

  it('shows a neutral letter avatar for an app simple-icons has no icon for, and for an unknown one', () => {
    const { container } = renderWithMantine(
      <>
        <AppLogo type="attio" name="Attio" />
        <AppLogo type="made_up_app" />
      </>,
    );
    expect(container.querySelector('svg')).toBeNull();
    expect(container.querySelector('[data-app-logo="attio"]')?.textContent).toBe('A');
    expect(container.querySelector('[data-app-logo="made_up_app"]')?.textContent).toBe('M');
  });
});

describe('the app picker', () => {
  it("shows each app's logo beside its name", async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        if (url === '/rest/connector-info')
          return new Response(
            JSON.stringify([info('airtable', 'Airtable'), info('pipedrive', 'Pipedrive', false)]),
          );
        return new Response(JSON.stringify({ statusCode: 404, message: 'Not found', response: {} }), {
          status: 404,
        });
      }),
    );
    const coreBase = { id: 'sync-1', leftExternalBase: null, rightExternalBase: null } as unknown as CoreBase;
    render(
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <MantineProvider>
          <SideSetup coreBase={coreBase} side="left" />
        </MantineProvider>
      </QueryClientProvider>,
    );
    fireEvent.click(await screen.findByRole('combobox', { name: 'App' }));
    // jsdom runs no transition: the open dropdown's options count as hidden.
    const airtable = await screen.findByRole('option', { name: 'Airtable', hidden: true });
    expect(airtable.querySelector('path')?.getAttribute('d')).toBe(siAirtable.path);
    const pipedrive = screen.getByRole('option', { name: 'Pipedrive (coming soon)', hidden: true });
    expect(pipedrive.querySelector('svg')).toBeNull();
    expect(within(pipedrive).getByText('P')).toBeTruthy();

    // The chosen app's logo stays beside it in the field.
    fireEvent.click(airtable);
    const field = screen.getByTestId('side-left');
    expect(field.querySelector('svg[data-app-logo="airtable"]')).not.toBeNull();
  });
});
