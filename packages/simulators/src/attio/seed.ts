/**
 * The standard objects (people, companies, deals) with Attio's standard attributes, one custom
 * object (projects), a "Sales pipeline" list over companies, two workspace members, and a small
 * realistic data set: 10 companies with domains, 3 people per company with names and emails,
 * 8 deals in stages linked to people and their company, 3 projects and 6 pipeline entries.
 * Deterministic given the id seed; created over the 60 days before the simulator's clock.
 */
import type { Actor, AttioState, EntryRow, RecordRow } from './model.ts';
import { attioTimestamp } from './values.ts';

export type AttioSeed = {
  members: string[];
  companies: string[];
  people: string[];
  deals: string[];
  projects: string[];
  entries: string[];
};

export const DEAL_STAGES = ['Lead', 'In Progress', 'Won 🎉', 'Lost'];
export const PIPELINE_STAGES = ['Prospect', 'Qualified', 'Negotiation', 'Won', 'Lost'];

/** Objects, attributes, members and the list: what every workspace has before any data. */
export function defineSchema(state: AttioState): void {
  state.addMember('Ada', 'Admin', 'ada@lockstep.example');
  state.addMember('Ben', 'Builder', 'ben@lockstep.example');

  const companies = { kind: 'object' as const, id: state.addObject('companies', 'Company', 'Companies').id };
  const people = { kind: 'object' as const, id: state.addObject('people', 'Person', 'People').id };
  const deals = { kind: 'object' as const, id: state.addObject('deals', 'Deal', 'Deals').id };
  const projects = { kind: 'object' as const, id: state.addObject('projects', 'Project', 'Projects').id };

  state.addAttribute(companies, 'name', 'Name', 'text');
  state.addAttribute(companies, 'domains', 'Domains', 'domain', { multiselect: true, unique: true });
  state.addAttribute(companies, 'description', 'Description', 'text');
  state.addAttribute(companies, 'categories', 'Categories', 'select', {
    multiselect: true,
    options: ['SaaS', 'B2B', 'B2C', 'Retail', 'Logistics', 'Finance', 'Healthcare', 'Education', 'Media'],
  });
  state.addAttribute(companies, 'employee_range', 'Employee range', 'select', {
    options: ['1-10', '11-50', '51-250', '251-1K', '1K-5K', '5K-10K'],
  });
  state.addAttribute(companies, 'primary_location', 'Primary location', 'location');
  state.addAttribute(companies, 'team', 'Team', 'record-reference', {
    multiselect: true,
    allowedObjects: ['people'],
  });
  state.addAttribute(companies, 'is_customer', 'Customer', 'checkbox');
  state.addAttribute(companies, 'account_rating', 'Account rating', 'rating');
  state.addAttribute(companies, 'founded_on', 'Founded on', 'date');
  state.addAttribute(companies, 'last_reviewed_at', 'Last reviewed at', 'timestamp');

  state.addAttribute(people, 'name', 'Name', 'personal-name');
  state.addAttribute(people, 'email_addresses', 'Email addresses', 'email-address', {
    multiselect: true,
    unique: true,
  });
  state.addAttribute(people, 'phone_numbers', 'Phone numbers', 'phone-number', { multiselect: true });
  state.addAttribute(people, 'job_title', 'Job title', 'text');
  state.addAttribute(people, 'company', 'Company', 'record-reference', { allowedObjects: ['companies'] });
  state.addAttribute(people, 'description', 'Description', 'text');
  state.addAttribute(people, 'primary_location', 'Primary location', 'location');
  state.addAttribute(people, 'first_email_interaction', 'First email interaction', 'interaction', {
    system: true,
    writable: false,
  });

  state.addAttribute(deals, 'name', 'Deal name', 'text', { required: true });
  state.addAttribute(deals, 'stage', 'Deal stage', 'status', { required: true, statuses: DEAL_STAGES });
  state.addAttribute(deals, 'owner', 'Deal owner', 'actor-reference');
  state.addAttribute(deals, 'value', 'Deal value', 'currency', { defaultCurrency: 'USD' });
  state.addAttribute(deals, 'associated_people', 'Associated people', 'record-reference', {
    multiselect: true,
    allowedObjects: ['people'],
  });
  state.addAttribute(deals, 'associated_company', 'Associated company', 'record-reference', {
    allowedObjects: ['companies'],
  });

  state.addAttribute(projects, 'name', 'Name', 'text', { required: true });
  state.addAttribute(projects, 'code', 'Code', 'text', { unique: true });
  state.addAttribute(projects, 'budget', 'Budget', 'number');
  state.addAttribute(projects, 'kickoff_at', 'Kickoff', 'timestamp');
  state.addAttribute(projects, 'priority', 'Priority', 'select', { options: ['Low', 'Medium', 'High'] });
  state.addAttribute(projects, 'company', 'Company', 'record-reference', { allowedObjects: ['companies'] });

  const admin = state.members[0]?.id ?? '';
  const pipeline = {
    kind: 'list' as const,
    id: state.addList('sales_pipeline', 'Sales pipeline', 'companies', admin).id,
  };
  state.addAttribute(pipeline, 'stage', 'Stage', 'status', { statuses: PIPELINE_STAGES });
  state.addAttribute(pipeline, 'priority', 'Priority', 'select', { options: ['Low', 'Medium', 'High'] });
  state.addAttribute(pipeline, 'next_step', 'Next step', 'text');
  state.addAttribute(pipeline, 'amount', 'Amount', 'currency');
}

const COMPANIES: [string, string, string[], string, string, string][] = [
  ['Acme Analytics', 'acme-analytics.com', ['SaaS', 'B2B'], '51-250', 'Boston', 'US'],
  ['Northwind Traders', 'northwind.example', ['Retail'], '251-1K', 'Seattle', 'US'],
  ['Globex Logistics', 'globex-logistics.com', ['Logistics', 'B2B'], '251-1K', 'Rotterdam', 'NL'],
  ['Initech Finance', 'initech.io', ['Finance'], '51-250', 'London', 'GB'],
  ['Umbrella Health', 'umbrella-health.org', ['Healthcare'], '1K-5K', 'Toronto', 'CA'],
  ['Stark Studios', 'starkstudios.co', ['Media'], '11-50', 'Berlin', 'DE'],
  ['Wayne Learning', 'waynelearning.edu', ['Education'], '251-1K', 'Chicago', 'US'],
  ['Hooli Cloud', 'hooli.cloud', ['SaaS'], '1K-5K', 'Dublin', 'IE'],
  ['Soylent Foods', 'soylentfoods.com', ['Retail', 'B2C'], '51-250', 'Lyon', 'FR'],
  ['Vandelay Imports', 'vandelay.example', ['Logistics'], '11-50', 'New York', 'US'],
];

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato', 'Garcia'];
const TITLES = ['CEO', 'CTO', 'Head of Sales', 'Operations Manager', 'Engineer', 'Marketing Lead'];

const DAY = 86_400_000;

/** Move a new row (and its values) into the past. */
function backdate(state: AttioState, parentId: string, row: RecordRow | EntryRow, at: number): void {
  row.createdAt = at;
  for (const values of row.values.values()) {
    for (const v of values) v.activeFrom = at;
  }
  const createdAt = state.attribute(parentId, 'created_at');
  const v = createdAt ? row.values.get(createdAt.id)?.[0] : undefined;
  if (v) v.payload = { value: attioTimestamp(at) };
}

export function seedData(state: AttioState): AttioSeed {
  const now = state.clock.now();
  const start = now - 60 * DAY;
  const admin = state.members[0];
  const actor: Actor = { type: 'workspace-member', ...(admin ? { id: admin.id } : {}) };
  const seed: AttioSeed = {
    members: state.members.map((m) => m.id),
    companies: [],
    people: [],
    deals: [],
    projects: [],
    entries: [],
  };

  COMPANIES.forEach(([name, domain, categories, range, city, country], i) => {
    const row = state.createRecord(
      'companies',
      {
        name,
        domains: [domain],
        description: `${name} (${city})`,
        categories,
        employee_range: range,
        primary_location: { locality: city, country_code: country },
        is_customer: i % 3 === 0,
        account_rating: (i % 5) + 1,
        founded_on: `${2005 + i}-0${(i % 9) + 1}-15`,
      },
      actor,
    );
    backdate(state, state.object('companies').id, row, start + i * DAY);
    seed.companies.push(row.id);
  });

  seed.companies.forEach((companyId, c) => {
    const domain = COMPANIES[c]?.[1] ?? 'example.com';
    for (let k = 0; k < 3; k++) {
      const n = c * 3 + k;
      const first = FIRST[n % FIRST.length] ?? 'Alex';
      const last = LAST[(n + c) % LAST.length] ?? 'Doe';
      const row = state.createRecord(
        'people',
        {
          name: { first_name: first, last_name: last, full_name: `${first} ${last}` },
          email_addresses: [`${first.toLowerCase()}.${last.toLowerCase()}@${domain}`],
          job_title: TITLES[n % TITLES.length],
          company: { target_object: 'companies', target_record_id: companyId },
          ...(k === 0 ? { phone_numbers: [`+1415555${String(1000 + n).slice(-4)}`] } : {}),
        },
        actor,
      );
      backdate(state, state.object('people').id, row, start + (10 + n) * DAY);
      seed.people.push(row.id);
    }
  });

  for (let d = 0; d < 8; d++) {
    const companyId = seed.companies[d] ?? '';
    const row = state.createRecord(
      'deals',
      {
        name: `${COMPANIES[d]?.[0] ?? 'Deal'} — ${['Platform licence', 'Expansion', 'Renewal', 'Onboarding'][d % 4]}`,
        stage: DEAL_STAGES[d % DEAL_STAGES.length],
        owner: state.members[d % state.members.length]?.id,
        value: { currency_value: 5000 * (d + 1), currency_code: 'USD' },
        associated_company: { target_object: 'companies', target_record_id: companyId },
        associated_people: seed.people
          .slice(d * 3, d * 3 + 2)
          .map((id) => ({ target_object: 'people', target_record_id: id })),
      },
      actor,
    );
    backdate(state, state.object('deals').id, row, start + (40 + d) * DAY);
    seed.deals.push(row.id);
  }

  ['Migration', 'Rollout', 'Audit'].forEach((name, p) => {
    const row = state.createRecord(
      'projects',
      {
        name: `${name} for ${COMPANIES[p]?.[0]}`,
        code: `PRJ-${100 + p}`,
        budget: 20_000 * (p + 1),
        kickoff_at: new Date(start + (50 + p) * DAY).toISOString(),
        priority: ['High', 'Medium', 'Low'][p],
        company: { target_object: 'companies', target_record_id: seed.companies[p] ?? '' },
      },
      actor,
    );
    backdate(state, state.object('projects').id, row, start + (50 + p) * DAY);
    seed.projects.push(row.id);
  });

  for (let e = 0; e < 6; e++) {
    const entry = state.createEntry(
      'sales_pipeline',
      'companies',
      seed.companies[e] ?? '',
      {
        stage: PIPELINE_STAGES[e % PIPELINE_STAGES.length],
        priority: ['High', 'Medium', 'Low'][e % 3],
        next_step: `Call ${COMPANIES[e]?.[0]}`,
        amount: 10_000 * (e + 1),
      },
      actor,
    );
    backdate(state, entry.list, entry, start + (55 + e) * DAY);
    seed.entries.push(entry.id);
  }
  return seed;
}
