/**
 * A realistic small CRM: 10 companies, 50 contacts (each with a primary company) and 10 deals
 * across the pipeline's stages, associated with their company and contacts. Deterministic (no
 * randomness beyond the simulator's id generator); created over the 60 days before the
 * simulator's clock, so everything is already in the search index.
 */
import type { CrmObject, HubSpotState } from './model.ts';
import { DEAL_STAGES, LAST_MODIFIED } from './properties.ts';

export type CrmSeed = { companies: string[]; contacts: string[]; deals: string[] };

const COMPANIES: [string, string, string, string, string, number][] = [
  ['Acme Analytics', 'acme-analytics.com', 'COMPUTER_SOFTWARE', 'Boston', 'United States', 120],
  ['Northwind Traders', 'northwind.example', 'RETAIL', 'Seattle', 'United States', 340],
  ['Globex Logistics', 'globex-logistics.com', 'LOGISTICS_AND_SUPPLY_CHAIN', 'Rotterdam', 'Netherlands', 860],
  ['Initech Finance', 'initech.io', 'FINANCIAL_SERVICES', 'London', 'United Kingdom', 95],
  ['Umbrella Health', 'umbrella-health.org', 'HOSPITAL_HEALTH_CARE', 'Toronto', 'Canada', 1500],
  ['Stark Studios', 'starkstudios.co', 'MARKETING_AND_ADVERTISING', 'Berlin', 'Germany', 42],
  ['Wayne Learning', 'waynelearning.edu', 'EDUCATION_MANAGEMENT', 'Chicago', 'United States', 210],
  ['Hooli Cloud', 'hooli.cloud', 'INFORMATION_TECHNOLOGY_AND_SERVICES', 'Dublin', 'Ireland', 2300],
  ['Soylent Foods', 'soylentfoods.com', 'RETAIL', 'Lyon', 'France', 77],
  ['Vandelay Imports', 'vandelay.example', 'LOGISTICS_AND_SUPPLY_CHAIN', 'New York', 'United States', 18],
];

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato', 'Garcia'];
const TITLES = ['CEO', 'CTO', 'Head of Sales', 'Operations Manager', 'Engineer', 'Marketing Lead'];
const STAGES = [
  'subscriber',
  'lead',
  'marketingqualifiedlead',
  'salesqualifiedlead',
  'opportunity',
  'customer',
];
const PRODUCTS = ['Platform licence', 'Onboarding', 'Support plan', 'Expansion', 'Renewal'];

const DAY = 86_400_000;

/** Put an object's times in the past (seed data): one version, already indexed. */
function backdate(obj: CrmObject, createdAt: number, updatedAt: number): void {
  obj.createdAt = createdAt;
  obj.updatedAt = updatedAt;
  obj.properties.set('createdate', new Date(createdAt).toISOString());
  obj.properties.set(LAST_MODIFIED[obj.type], new Date(updatedAt).toISOString());
  obj.versions = [{ at: updatedAt, properties: new Map(obj.properties), updatedAt, archived: false }];
}

export function seedCrm(state: HubSpotState, options: { contacts?: number } = {}): CrmSeed {
  const now = state.clock.now();
  const start = now - 60 * DAY;
  const contactsWanted = options.contacts ?? 50;
  const seed: CrmSeed = { companies: [], contacts: [], deals: [] };

  COMPANIES.forEach(([name, domain, industry, city, country, employees], i) => {
    const obj = state.create('companies', {
      name,
      domain,
      website: `https://${domain}`,
      industry,
      city,
      country,
      numberofemployees: employees,
      annualrevenue: employees * 110_000,
      lifecyclestage: i % 3 === 0 ? 'customer' : 'opportunity',
    });
    backdate(obj, start + i * DAY, start + i * DAY + 3_600_000);
    seed.companies.push(obj.id);
  });

  for (let i = 0; i < contactsWanted; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const companyIndex = i % COMPANIES.length;
    const [companyName, domain] = COMPANIES[companyIndex] as (typeof COMPANIES)[number];
    // Past 50 contacts the names repeat, so a number keeps the emails unique.
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const obj = state.create('contacts', {
      email: `${first}.${last}${suffix}@${domain}`.toLowerCase(),
      firstname: first,
      lastname: last,
      phone: `+1 555 01${String(i).padStart(2, '0')}`,
      company: companyName,
      jobtitle: TITLES[i % TITLES.length],
      lifecyclestage: STAGES[i % STAGES.length],
    });
    const created = start + 10 * DAY + Math.floor((i * 45 * DAY) / Math.max(contactsWanted, 1));
    const companyId = seed.companies[companyIndex] as string;
    state.associate('contacts', obj.id, 'companies', companyId, 1);
    obj.properties.set('associatedcompanyid', companyId);
    backdate(obj, created, created + (i % 4) * DAY);
    seed.contacts.push(obj.id);
  }

  for (let i = 0; i < 10; i++) {
    const companyIndex = i % COMPANIES.length;
    const [companyName] = COMPANIES[companyIndex] as (typeof COMPANIES)[number];
    const stage = DEAL_STAGES[i % DEAL_STAGES.length]?.[0] as string;
    const created = start + 20 * DAY + i * 3 * DAY;
    const obj = state.create('deals', {
      dealname: `${companyName} - ${PRODUCTS[i % PRODUCTS.length]}`,
      amount: 5000 + i * 2500,
      dealstage: stage,
      pipeline: 'default',
      closedate: new Date(created + 30 * DAY).toISOString(),
      dealtype: i % 2 === 0 ? 'newbusiness' : 'existingbusiness',
    });
    state.associate('deals', obj.id, 'companies', seed.companies[companyIndex] as string, 5);
    // The company's first one or two contacts are on the deal.
    for (const c of seed.contacts
      .filter((_, j) => j % COMPANIES.length === companyIndex)
      .slice(0, 1 + (i % 2))) {
      state.associate('deals', obj.id, 'contacts', c);
    }
    backdate(obj, created, created + 2 * DAY);
    seed.deals.push(obj.id);
  }
  return seed;
}
