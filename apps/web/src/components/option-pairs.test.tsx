import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { renderWithMantine } from '../test/render';
import { OptionPairsButton } from './option-pairs';

/** A Mantine Select's input by its label (its listbox carries the label too). */
const input = (label: string) =>
  screen.getAllByLabelText(label).find((e) => e.tagName === 'INPUT') as HTMLInputElement;

const select = (id: string, name: string, choices: string[]) => ({
  id,
  remoteId: name,
  name,
  fieldType: 'single_select',
  readOnly: false,
  options: { choices },
});

describe('option pairs of a field pair', () => {
  it('flags options the other select lacks, and keeps the pair the user picks', async () => {
    const onChange = vi.fn();
    renderWithMantine(
      <OptionPairsButton
        left={select('l', 'lifecycle_stage', ['lead', 'customer', 'partner'])}
        right={select('r', 'Status', ['Lead', 'Customer'])}
        leftApp="Demo CRM"
        rightApp="Airtable"
        pairs={null}
        onChange={onChange}
      />,
    );
    // lead and customer go across by name; partner has nowhere to go.
    fireEvent.click(screen.getByRole('button', { name: 'Options: 1 not paired' }));
    expect(await screen.findByText('1 not paired: records with it become issues')).toBeTruthy();
    expect(input('lead in Airtable').value).toBe('Lead');
    const partner = input('partner in Airtable');
    fireEvent.click(partner);
    const listbox = await waitFor(() => {
      const id = partner.getAttribute('aria-controls');
      const el = id ? document.getElementById(id) : null;
      if (!el) throw new Error('the options did not open');
      return el;
    });
    fireEvent.click(within(listbox).getByRole('option', { name: 'Customer', hidden: true }));
    fireEvent.click(screen.getByRole('button', { name: 'Keep these pairs' }));
    await waitFor(() => expect(onChange).toHaveBeenCalledWith([{ left: 'partner', right: 'Customer' }]));
  });

  it('is not offered for fields that are not selects', () => {
    renderWithMantine(
      <OptionPairsButton
        left={{ ...select('l', 'name', []), fieldType: 'text' }}
        right={{ ...select('r', 'Name', []), fieldType: 'text' }}
        leftApp="A"
        rightApp="B"
        pairs={null}
        onChange={() => {}}
      />,
    );
    expect(screen.queryByRole('button', { name: /Options/ })).toBeNull();
  });
});
