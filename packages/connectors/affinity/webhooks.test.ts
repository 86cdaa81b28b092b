import { describe, expect, it } from 'vitest';
import { affinityTablesWoken, parseAffinityWebhook } from './webhooks';

const delivery = (type: string, body: Record<string, unknown>, sentAt = 1_760_000_000) =>
  JSON.stringify({ type, body, sent_at: sentAt });
const TABLES = ['persons', 'companies', 'opportunities', 'list-11', 'list-12'];
const woken = (raw: string) => {
  const event = parseAffinityWebhook(raw);
  if (!event) throw new Error('not an event');
  return affinityTablesWoken(event, TABLES);
};

describe('parseAffinityWebhook', () => {
  it('reads the type and sent_at, and is null for what is not an event', () => {
    const event = parseAffinityWebhook(delivery('person.updated', { id: 5 }));
    expect(event).toMatchObject({ type: 'person.updated', sentAtMs: 1_760_000_000_000 });
    expect(parseAffinityWebhook('not json')).toBeNull();
    expect(parseAffinityWebhook('[]')).toBeNull();
    expect(parseAffinityWebhook(JSON.stringify({ body: { id: 5 } }))).toBeNull();
    expect(parseAffinityWebhook(JSON.stringify({ type: 'person.updated' }))?.sentAtMs).toBeNull();
  });

  it('identifies an event by its raw delivery, sent_at included (Affinity gives no id)', () => {
    const a = parseAffinityWebhook(delivery('person.updated', { id: 5 }));
    expect(a?.eventId).toMatch(/^affinity:[A-Za-z0-9_-]{43}$/);
    expect(parseAffinityWebhook(delivery('person.updated', { id: 5 }))?.eventId).toBe(a?.eventId);
    expect(parseAffinityWebhook(delivery('person.updated', { id: 5 }, 1_760_000_001))?.eventId).not.toBe(
      a?.eventId,
    );
    expect(parseAffinityWebhook(delivery('person.updated', { id: 6 }))?.eventId).not.toBe(a?.eventId);
  });

  it('maps persons and organizations to their tables and to every list (entries show their names)', () => {
    expect(woken(delivery('person.created', { id: 5 }))).toEqual(['persons', 'list-11', 'list-12']);
    // An organization's persons are the persons' Organizations links: persons are read again.
    expect(woken(delivery('organization.updated', { id: 5, person_ids: [1] }))).toEqual([
      'persons',
      'companies',
      'list-11',
      'list-12',
    ]);
    // Gone or merged away: the opportunities linked to it lose the link.
    expect(woken(delivery('organization.deleted', { id: 5 }))).toEqual(TABLES);
    expect(woken(delivery('organization.merged', { id: 5 }))).toEqual(TABLES);
    expect(woken(delivery('person.deleted', { id: 5 }))).toEqual([
      'persons',
      'opportunities',
      'list-11',
      'list-12',
    ]);
  });

  it('maps an opportunity to opportunities and the list its entry names', () => {
    expect(woken(delivery('opportunity.updated', { id: 9, list_entries: [{ id: 3, list_id: 12 }] }))).toEqual(
      ['opportunities', 'list-12'],
    );
    expect(woken(delivery('opportunity.deleted', { id: 9 }))).toEqual([
      'opportunities',
      'list-11',
      'list-12',
    ]);
  });

  it('maps a list entry to its list only', () => {
    expect(woken(delivery('list_entry.created', { id: 3, list_id: 11, entity_id: 5 }))).toEqual(['list-11']);
    expect(woken(delivery('list_entry.deleted', { id: 3, list_id: 99 }))).toEqual([]);
  });

  it('maps a global field value to persons, companies and lists, a list one to lists only', () => {
    expect(woken(delivery('field_value.updated', { id: 1, entity_id: 5, list_entry_id: null }))).toEqual([
      'persons',
      'companies',
      'list-11',
      'list-12',
    ]);
    expect(woken(delivery('field_value.created', { id: 1, entity_id: 5, list_entry_id: 3 }))).toEqual([
      'list-11',
      'list-12',
    ]);
  });

  it('wakes nothing for other events (the address check, notes)', () => {
    expect(woken(delivery('webhook.probe', {}))).toEqual([]);
    expect(woken(delivery('note.created', { id: 1 }))).toEqual([]);
  });
});
