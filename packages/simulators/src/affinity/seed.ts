/**
 * A venture firm's Affinity: two internal users, organizations with domains, people at them,
 * global fields (job title, location, industry, headcount), Affinity Data enrichment, and three
 * lists: a "Deal Pipeline" of opportunities (Status, Amount, Owners, Close Date), a "Portfolio"
 * of organizations (Priority, Investment Date) and "Founders" (Source).
 */
import {
  type AffinityList,
  type AffinityState,
  ENTITY_OPPORTUNITY,
  ENTITY_ORGANIZATION,
  ENTITY_PERSON,
  type Field,
  VALUE_TYPES,
} from './model.ts';

export type SeedCounts = { organizations?: number; persons?: number; opportunities?: number };

export type AffinitySeed = {
  users: number[];
  organizations: number[];
  persons: number[];
  opportunities: number[];
  lists: { pipeline: number; portfolio: number; founders: number };
  fields: Record<string, number>;
};

const COMPANIES: [string, string, string, string][] = [
  ['Northwind Analytics', 'northwind.io', 'Software', 'Seattle'],
  ['Bluebird Health', 'bluebirdhealth.com', 'Healthcare', 'Boston'],
  ['Quarry Robotics', 'quarryrobotics.com', 'Robotics', 'Pittsburgh'],
  ['Tidewater Energy', 'tidewater.energy', 'Energy', 'Houston'],
  ['Lumen Labs', 'lumenlabs.ai', 'Software', 'San Francisco'],
  ['Harbor Freight Tech', 'harborfreight.tech', 'Logistics', 'Oakland'],
  ['Cedar Payments', 'cedarpay.com', 'Fintech', 'New York'],
  ['Atlas Genomics', 'atlasgenomics.bio', 'Healthcare', 'San Diego'],
  ['Kestrel Security', 'kestrelsec.com', 'Software', 'Austin'],
  ['Meridian Foods', 'meridianfoods.co', 'Consumer', 'Chicago'],
  ['Orbit Logistics', 'orbitlogistics.com', 'Logistics', 'Atlanta'],
  ['Pinecone Finance', 'pineconefinance.com', 'Fintech', 'Denver'],
];

const FIRST = [
  'Ava',
  'Noah',
  'Mia',
  'Liam',
  'Zoe',
  'Ethan',
  'Leah',
  'Omar',
  'Ines',
  'Ravi',
  'Grace',
  'Hugo',
  'Yuki',
  'Tariq',
  'Nora',
];
const LAST = [
  'Patel',
  'Nguyen',
  'Garcia',
  'Kim',
  'Okafor',
  'Rossi',
  'Schmidt',
  'Haddad',
  'Silva',
  'Brennan',
  'Larsen',
  'Mensah',
];
const TITLES = ['CEO', 'CTO', 'VP Engineering', 'Head of Sales', 'CFO', 'Product Lead', 'COO'];
const STATES: Record<string, string> = {
  Seattle: 'Washington',
  Boston: 'Massachusetts',
  Pittsburgh: 'Pennsylvania',
  Houston: 'Texas',
  'San Francisco': 'California',
  Oakland: 'California',
  'New York': 'New York',
  'San Diego': 'California',
  Austin: 'Texas',
  Chicago: 'Illinois',
  Atlanta: 'Georgia',
  Denver: 'Colorado',
};

function loc(city: string) {
  return {
    street_address: null,
    city,
    state: STATES[city] ?? null,
    country: 'United States',
    continent: 'North America',
  };
}

function option(f: Field, text: string): number {
  const o = f.dropdownOptions.find((x) => x.text === text);
  if (!o) throw new Error(`no option ${text} on ${f.name}`);
  return o.id;
}

/** Creates the users only (every simulator has them, seeded or not). */
export function seedUsers(state: AffinityState): number[] {
  if (state.users.length === 0) {
    state.addUser('Maya', 'Chen', 'maya@lockstep-ventures.com');
    state.addUser('Sam', 'Ortiz', 'sam@lockstep-ventures.com');
  }
  return state.users.map((u) => u.id);
}

export function seedCrm(state: AffinityState, counts: SeedCounts = {}): AffinitySeed {
  const users = seedUsers(state);
  const nOrgs = Math.min(counts.organizations ?? 10, COMPANIES.length);
  const nPersons = counts.persons ?? 30;
  const nOpps = counts.opportunities ?? 8;
  const field = (f: Parameters<AffinityState['createField']>[0]) => state.createField(f);

  // Global fields
  const jobTitle = field({
    name: 'Job Title',
    listId: null,
    entityType: ENTITY_PERSON,
    valueType: VALUE_TYPES.text,
    allowsMultiple: false,
  });
  const personLocation = field({
    name: 'Location',
    listId: null,
    entityType: ENTITY_PERSON,
    valueType: VALUE_TYPES.location,
    allowsMultiple: false,
  });
  const industry = field({
    name: 'Industry',
    listId: null,
    entityType: ENTITY_ORGANIZATION,
    valueType: VALUE_TYPES.dropdown,
    allowsMultiple: true,
    options: ['Software', 'Healthcare', 'Robotics', 'Energy', 'Logistics', 'Fintech', 'Consumer'],
  });
  const employees = field({
    name: 'Employees',
    listId: null,
    entityType: ENTITY_ORGANIZATION,
    valueType: VALUE_TYPES.number,
    allowsMultiple: false,
  });
  state.enrichedFields.push(
    {
      id: 'affinity-data-description',
      name: 'Description',
      entityType: ENTITY_ORGANIZATION,
      valueType: 'text',
    },
    {
      id: 'affinity-data-location',
      name: 'Location',
      entityType: ENTITY_ORGANIZATION,
      valueType: 'location',
    },
    {
      id: 'affinity-data-job-titles',
      name: 'Job Titles',
      entityType: ENTITY_PERSON,
      valueType: 'filterable-text-multi',
    },
  );

  // Organizations
  const organizations: number[] = [];
  COMPANIES.slice(0, nOrgs).forEach(([name, domain, ind, city], i) => {
    const o = state.createOrganization({ name, domain }, 'app');
    organizations.push(o.id);
    state.createFieldValue({ field_id: industry.id, entity_id: o.id, value: ind }, 'app');
    state.createFieldValue({ field_id: employees.id, entity_id: o.id, value: 12 + ((i * 37) % 400) }, 'app');
    state.setEnriched(
      ENTITY_ORGANIZATION,
      o.id,
      'affinity-data-description',
      `${name} builds ${ind.toLowerCase()} products.`,
    );
    state.setEnriched(ENTITY_ORGANIZATION, o.id, 'affinity-data-location', loc(city));
  });

  // Persons
  const persons: number[] = [];
  for (let i = 0; i < nPersons; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[(i * 7) % LAST.length] as string;
    const orgIndex = organizations.length ? i % organizations.length : -1;
    const org = orgIndex >= 0 ? COMPANIES[orgIndex] : undefined;
    const domain = org ? org[1] : 'example.com';
    const email = `${first.toLowerCase()}.${last.toLowerCase()}${i >= FIRST.length ? i : ''}@${domain}`;
    const p = state.createPerson(
      {
        first_name: first,
        last_name: last,
        emails: [email],
        organization_ids: orgIndex >= 0 ? [organizations[orgIndex]] : [],
      },
      'app',
    );
    persons.push(p.id);
    const title = TITLES[i % TITLES.length] as string;
    state.createFieldValue({ field_id: jobTitle.id, entity_id: p.id, value: title }, 'app');
    if (org)
      state.createFieldValue({ field_id: personLocation.id, entity_id: p.id, value: loc(org[3]) }, 'app');
    state.setEnriched(ENTITY_PERSON, p.id, 'affinity-data-job-titles', [title]);
  }

  // Deal Pipeline (opportunities)
  const pipeline = state.createList('Deal Pipeline', ENTITY_OPPORTUNITY, true);
  const status = field({
    name: 'Status',
    listId: pipeline.id,
    entityType: ENTITY_OPPORTUNITY,
    valueType: VALUE_TYPES.rankedDropdown,
    allowsMultiple: false,
    options: ['Lead', 'Qualified', 'Term Sheet', 'Won', 'Lost'],
  });
  const amount = field({
    name: 'Amount',
    listId: pipeline.id,
    entityType: ENTITY_OPPORTUNITY,
    valueType: VALUE_TYPES.number,
    allowsMultiple: false,
  });
  const owners = field({
    name: 'Owners',
    listId: pipeline.id,
    entityType: ENTITY_OPPORTUNITY,
    valueType: VALUE_TYPES.person,
    allowsMultiple: true,
  });
  const closeDate = field({
    name: 'Close Date',
    listId: pipeline.id,
    entityType: ENTITY_OPPORTUNITY,
    valueType: VALUE_TYPES.date,
    allowsMultiple: false,
  });
  const stages = ['Lead', 'Qualified', 'Term Sheet', 'Won', 'Lost'];
  const opportunities: number[] = [];
  for (let i = 0; i < nOpps; i++) {
    const orgId = organizations[i % Math.max(1, organizations.length)];
    const orgName = orgId !== undefined ? state.organization(orgId).name : 'Prospect';
    const personId = persons[i % Math.max(1, persons.length)];
    const opp = state.createOpportunity(
      {
        name: `${orgName} ${i % 2 === 0 ? 'Series A' : 'Seed'}`,
        list_id: pipeline.id,
        organization_ids: orgId !== undefined ? [orgId] : [],
        person_ids: personId !== undefined ? [personId] : [],
      },
      'app',
    );
    opportunities.push(opp.id);
    const entry = state.entriesOf(ENTITY_OPPORTUNITY, opp.id)[0];
    if (!entry) continue;
    const at = (f: Field, value: unknown) =>
      state.createFieldValue({ field_id: f.id, entity_id: opp.id, list_entry_id: entry.id, value }, 'app');
    at(status, option(status, stages[i % stages.length] as string));
    at(amount, 250_000 * (i + 1));
    at(owners, users[i % users.length]);
    at(closeDate, new Date(Date.UTC(2026, 2 + (i % 6), 1 + i)).toISOString());
  }

  // Portfolio (organizations)
  const portfolio = state.createList('Portfolio', ENTITY_ORGANIZATION, true);
  const priority = field({
    name: 'Priority',
    listId: portfolio.id,
    entityType: ENTITY_ORGANIZATION,
    valueType: VALUE_TYPES.dropdown,
    allowsMultiple: false,
    options: ['High', 'Medium', 'Low'],
  });
  const invested = field({
    name: 'Investment Date',
    listId: portfolio.id,
    entityType: ENTITY_ORGANIZATION,
    valueType: VALUE_TYPES.date,
    allowsMultiple: false,
  });
  organizations.slice(0, 6).forEach((orgId, i) => {
    const e = state.createListEntry(portfolio.id, { entity_id: orgId }, 'app');
    state.createFieldValue(
      {
        field_id: priority.id,
        entity_id: orgId,
        list_entry_id: e.id,
        value: ['High', 'Medium', 'Low'][i % 3],
      },
      'app',
    );
    state.createFieldValue(
      {
        field_id: invested.id,
        entity_id: orgId,
        list_entry_id: e.id,
        value: new Date(Date.UTC(2024, i, 15)).toISOString(),
      },
      'app',
    );
  });

  // Founders (persons)
  const founders = state.createList('Founders', ENTITY_PERSON, false);
  const source = field({
    name: 'Source',
    listId: founders.id,
    entityType: ENTITY_PERSON,
    valueType: VALUE_TYPES.text,
    allowsMultiple: false,
  });
  persons.slice(0, 5).forEach((pid, i) => {
    const e = state.createListEntry(founders.id, { entity_id: pid }, 'app');
    state.createFieldValue(
      {
        field_id: source.id,
        entity_id: pid,
        list_entry_id: e.id,
        value: ['Referral', 'Conference', 'Inbound'][i % 3],
      },
      'app',
    );
  });

  const listIds = (l: AffinityList) => l.id;
  return {
    users,
    organizations,
    persons,
    opportunities,
    lists: { pipeline: listIds(pipeline), portfolio: listIds(portfolio), founders: listIds(founders) },
    fields: {
      jobTitle: jobTitle.id,
      personLocation: personLocation.id,
      industry: industry.id,
      employees: employees.id,
      status: status.id,
      amount: amount.id,
      owners: owners.id,
      closeDate: closeDate.id,
      priority: priority.id,
      investmentDate: invested.id,
      source: source.id,
    },
  };
}
