/**
 * A realistic small org: 10 accounts, 50 contacts (each at an account), 15 leads, 12
 * opportunities across the stages and 8 projects (Project__c). Deterministic apart from the
 * simulator's id generator; created over the 25 days before the simulator's clock (inside the
 * 30-day `updated` window).
 */
import { DAY_MS, type SalesforceState, type SfRecord } from './model.ts';
import { LEAD_STATUSES, OPPORTUNITY_STAGES } from './schema.ts';

export type SalesforceSeed = {
  accounts: string[];
  contacts: string[];
  leads: string[];
  opportunities: string[];
  projects: string[];
};

export type SeedOptions = {
  accounts?: number;
  contacts?: number;
  leads?: number;
  opportunities?: number;
  projects?: number;
};

const ACCOUNTS: [string, string, string, string, string, number][] = [
  ['Acme Analytics', 'acme-analytics.com', 'Technology', 'Boston', 'United States', 120],
  ['Northwind Traders', 'northwind.example', 'Retail', 'Seattle', 'United States', 340],
  ['Globex Logistics', 'globex-logistics.com', 'Transportation', 'Rotterdam', 'Netherlands', 860],
  ['Initech Finance', 'initech.io', 'Finance', 'London', 'United Kingdom', 95],
  ['Umbrella Health', 'umbrella-health.org', 'Healthcare', 'Toronto', 'Canada', 1500],
  ['Stark Studios', 'starkstudios.co', 'Media', 'Berlin', 'Germany', 42],
  ['Wayne Learning', 'waynelearning.edu', 'Education', 'Chicago', 'United States', 210],
  ['Hooli Cloud', 'hooli.cloud', 'Technology', 'Dublin', 'Ireland', 2300],
  ['Soylent Foods', 'soylentfoods.com', 'Agriculture', 'Lyon', 'France', 77],
  ['Vandelay Imports', 'vandelay.example', 'Manufacturing', 'New York', 'United States', 18],
];
const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato', 'Garcia'];
const TITLES = ['CEO', 'CTO', 'Head of Sales', 'Operations Manager', 'Engineer', 'Marketing Lead'];
const SOURCES = ['Web', 'Phone Inquiry', 'Partner Referral', 'Purchased List', 'Other'];
const INTERESTS = ['Analytics', 'Automation', 'Integrations', 'Security', 'Training'];
const LEAD_COMPANIES = [
  'Blue Sun',
  'Cyberdyne',
  'Dunder Mifflin',
  'Gringotts',
  'Massive Dynamic',
  'Oscorp',
  'Pied Piper',
  'Tyrell',
];
const PRODUCTS = ['Platform licence', 'Onboarding', 'Support plan', 'Expansion', 'Renewal'];
const PROJECT_STATUS = ['Planned', 'Active', 'On Hold', 'Done'];

/** Put a seeded record's times in the past. */
function backdate(rec: SfRecord, created: number, modified: number): void {
  rec.values.set('CreatedDate', created);
  rec.values.set('LastModifiedDate', modified);
  rec.values.set('SystemModstamp', modified);
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function seedOrg(state: SalesforceState, options: SeedOptions = {}): SalesforceSeed {
  const now = state.clock.now();
  const start = now - 25 * DAY_MS;
  const seed: SalesforceSeed = { accounts: [], contacts: [], leads: [], opportunities: [], projects: [] };
  const nAccounts = Math.min(options.accounts ?? ACCOUNTS.length, 1_000_000);

  for (let i = 0; i < nAccounts; i++) {
    const [name, domain, industry, city, country, employees] = ACCOUNTS[
      i % ACCOUNTS.length
    ] as (typeof ACCOUNTS)[number];
    const suffix = i < ACCOUNTS.length ? '' : ` ${Math.floor(i / ACCOUNTS.length) + 1}`;
    const rec = state.create('Account', {
      Name: `${name}${suffix}`,
      Type: i % 3 === 0 ? 'Customer - Direct' : 'Prospect',
      Industry: industry,
      Rating: ['Hot', 'Warm', 'Cold'][i % 3],
      Phone: `+1 555 02${String(i % 100).padStart(2, '0')}`,
      Website: `https://${domain}`,
      AnnualRevenue: employees * 110_000,
      NumberOfEmployees: employees,
      BillingCity: city,
      BillingCountry: country,
      External_Key__c: `ACC-${String(i + 1).padStart(4, '0')}`,
    });
    const created = start + (i % 10) * 3_600_000;
    backdate(rec, created, created + DAY_MS);
    seed.accounts.push(rec.id);
  }

  const nContacts = options.contacts ?? 50;
  for (let i = 0; i < nContacts; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const accountIndex = seed.accounts.length > 0 ? i % seed.accounts.length : -1;
    const domain = (ACCOUNTS[Math.max(accountIndex, 0) % ACCOUNTS.length] as (typeof ACCOUNTS)[number])[1];
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const rec = state.create('Contact', {
      FirstName: first,
      LastName: last,
      Email: `${first}.${last}${suffix}@${domain}`.toLowerCase(),
      Phone: `+1 555 01${String(i % 100).padStart(2, '0')}`,
      Title: TITLES[i % TITLES.length],
      LeadSource: SOURCES[i % SOURCES.length],
      MailingCountry: (ACCOUNTS[Math.max(accountIndex, 0) % ACCOUNTS.length] as (typeof ACCOUNTS)[number])[4],
      Interests__c: [INTERESTS[i % 5], INTERESTS[(i + 2) % 5]].join(';'),
      ...(accountIndex >= 0 ? { AccountId: seed.accounts[accountIndex] } : {}),
      ...(i % 7 === 0 ? { Birthdate: `19${70 + (i % 25)}-0${1 + (i % 9)}-1${i % 9}` } : {}),
    });
    const created = start + 2 * DAY_MS + Math.floor((i * 20 * DAY_MS) / Math.max(nContacts, 1));
    backdate(rec, created, created + (i % 3) * DAY_MS);
    seed.contacts.push(rec.id);
  }

  const nLeads = options.leads ?? 15;
  for (let i = 0; i < nLeads; i++) {
    const first = FIRST[(i + 3) % FIRST.length] as string;
    const last = LAST[i % LAST.length] as string;
    const company = LEAD_COMPANIES[i % LEAD_COMPANIES.length] as string;
    const rec = state.create('Lead', {
      FirstName: first,
      LastName: last,
      Company: company,
      Email: `${first}.${last}${i}@${company.toLowerCase().replace(/\s+/g, '')}.example`.toLowerCase(),
      Status: LEAD_STATUSES[i % 2],
      LeadSource: SOURCES[(i + 1) % SOURCES.length],
      Rating: ['Hot', 'Warm', 'Cold'][i % 3],
    });
    const created = start + 5 * DAY_MS + i * 12 * 3_600_000;
    backdate(rec, created, created + 3_600_000);
    seed.leads.push(rec.id);
  }

  const nOpps = seed.accounts.length > 0 ? (options.opportunities ?? 12) : 0;
  for (let i = 0; i < nOpps; i++) {
    const accountIndex = i % seed.accounts.length;
    const [name] = ACCOUNTS[accountIndex % ACCOUNTS.length] as (typeof ACCOUNTS)[number];
    const stage = OPPORTUNITY_STAGES[i % OPPORTUNITY_STAGES.length]?.value as string;
    const created = start + 8 * DAY_MS + i * DAY_MS;
    const rec = state.create('Opportunity', {
      Name: `${name} - ${PRODUCTS[i % PRODUCTS.length]}`,
      AccountId: seed.accounts[accountIndex],
      StageName: stage,
      Amount: 5000 + i * 2500,
      CloseDate: day(created + 30 * DAY_MS),
      Type: i % 2 === 0 ? 'New Customer' : 'Existing Customer - Upgrade',
    });
    backdate(rec, created, created + 2 * DAY_MS);
    seed.opportunities.push(rec.id);
  }

  const nProjects = options.projects ?? 8;
  for (let i = 0; i < nProjects; i++) {
    const created = start + 12 * DAY_MS + i * DAY_MS;
    const rec = state.create('Project__c', {
      Name: `${PRODUCTS[i % PRODUCTS.length]} rollout ${i + 1}`,
      Project_Code__c: `PRJ-${String(i + 1).padStart(3, '0')}`,
      Status__c: PROJECT_STATUS[i % PROJECT_STATUS.length],
      Tags__c: i % 2 === 0 ? 'Billable;Priority' : 'Internal',
      Start_Date__c: day(created),
      Kickoff_At__c: new Date(created + 9 * 3_600_000).toISOString(),
      Budget__c: 20_000 + i * 5000,
      Spent__c: 4000 + i * 4500,
      Completion__c: (i * 12.5) % 100,
      Hours__c: 40 + i * 7.5,
      Active__c: i % 4 !== 3,
      ...(seed.accounts.length > 0 ? { Account__c: seed.accounts[i % seed.accounts.length] } : {}),
    });
    backdate(rec, created, created + DAY_MS);
    seed.projects.push(rec.id);
  }
  return seed;
}
