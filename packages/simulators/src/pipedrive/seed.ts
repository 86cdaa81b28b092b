/**
 * A small, realistic CRM: custom fields on each kind (an enum "Lead source" and a set "Interests"
 * on persons, so hash keys and option ids show up), organizations, persons linked to them, and
 * deals in pipeline stages linked to a person and its organization. Deterministic: the same seed
 * gives the same data and ids. Seeding emits no webhooks (subscriptions are made afterwards).
 */
import type { FieldDef } from './fields.ts';
import type { PipedriveState } from './model.ts';

export type CrmSeed = {
  organizations: number[];
  persons: number[];
  deals: number[];
  fields: {
    /** Person enum field "Lead source" (options Website, Referral, Event, Cold call). */
    leadSource: FieldDef;
    /** Person set field "Interests" (options Sync, Reporting, Automation). */
    interests: FieldDef;
    /** Person varchar field "Preferred name". */
    preferredName: FieldDef;
    /** Organization double field "Employees". */
    employees: FieldDef;
    /** Deal enum field "Deal type" (options New business, Renewal, Upsell). */
    dealType: FieldDef;
  };
};

const COMPANIES = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark Industries',
  'Wayne Enterprises',
  'Tyrell',
];
const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Radia', 'Edsger'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Perlman',
  'Dijkstra',
];

export function seedCrm(state: PipedriveState, options: { persons?: number } = {}): CrmSeed {
  const fields = {
    leadSource:
      state.fieldByName('persons', 'Lead source') ??
      state.addCustomField('persons', {
        name: 'Lead source',
        field_type: 'enum',
        options: ['Website', 'Referral', 'Event', 'Cold call'],
      }),
    interests:
      state.fieldByName('persons', 'Interests') ??
      state.addCustomField('persons', {
        name: 'Interests',
        field_type: 'set',
        options: ['Sync', 'Reporting', 'Automation'],
      }),
    preferredName:
      state.fieldByName('persons', 'Preferred name') ??
      state.addCustomField('persons', { name: 'Preferred name', field_type: 'varchar' }),
    employees:
      state.fieldByName('organizations', 'Employees') ??
      state.addCustomField('organizations', { name: 'Employees', field_type: 'double' }),
    dealType:
      state.fieldByName('deals', 'Deal type') ??
      state.addCustomField('deals', {
        name: 'Deal type',
        field_type: 'enum',
        options: ['New business', 'Renewal', 'Upsell'],
      }),
  };
  const opt = (f: FieldDef, i: number) => {
    const options = f.options ?? [];
    return options[i % options.length]?.id;
  };
  const users = state.users.map((u) => u.id);
  const organizations = COMPANIES.map(
    (name, i) =>
      state.create('organizations', {
        name,
        owner_id: users[i % users.length],
        address: { value: `${100 + i} Main Street, Springfield` },
        website: `https://${name.toLowerCase().replace(/[^a-z]+/g, '')}.example.com`,
        custom_fields: { [fields.employees.key]: 50 * (i + 1) },
      }).id,
  );
  const count = options.persons ?? 30;
  const persons: number[] = [];
  for (let i = 0; i < count; i++) {
    const first = FIRST[i % FIRST.length] ?? 'Pat';
    const last = LAST[Math.floor(i / FIRST.length + i) % LAST.length] ?? 'Doe';
    // A person's email is first.last (as another app would hold the same person's); the first 100
    // names are distinct, past them a number keeps the emails unique.
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const custom: Record<string, unknown> = { [fields.leadSource.key]: opt(fields.leadSource, i) };
    if (i % 3 === 0) custom[fields.interests.key] = [opt(fields.interests, i), opt(fields.interests, i + 1)];
    if (i % 4 === 0) custom[fields.preferredName.key] = first;
    const p = state.create('persons', {
      name: `${first} ${last}`,
      org_id: organizations[i % organizations.length],
      owner_id: users[i % users.length],
      emails: [
        { value: `${first}.${last}${suffix}@example.com`.toLowerCase(), primary: true, label: 'work' },
      ],
      phones:
        i % 2 === 0
          ? [{ value: `+1 555 01${String(i).padStart(2, '0')}`, primary: true, label: 'mobile' }]
          : [],
      job_title: i % 5 === 0 ? 'Head of Operations' : 'Engineer',
      custom_fields: custom,
    });
    persons.push(p.id);
  }
  const deals: number[] = [];
  const stageIds = state.stages.map((s) => s.id);
  for (let i = 0; i < Math.min(12, persons.length); i++) {
    const personId = persons[i] as number;
    const person = state.get('persons', personId);
    const d = state.create('deals', {
      title: `${COMPANIES[i % COMPANIES.length]} deal ${i + 1}`,
      value: 1000 * (i + 1),
      currency: 'USD',
      person_id: personId,
      org_id: person?.values.org_id,
      stage_id: stageIds[i % stageIds.length],
      owner_id: users[i % users.length],
      ...(i % 6 === 5 ? { status: 'won' } : {}),
      custom_fields: { [fields.dealType.key]: opt(fields.dealType, i) },
    });
    deals.push(d.id);
  }
  return { organizations, persons, deals, fields };
}
