/**
 * Realistic sample data: a small CRM base with Companies, Contacts and Deals.
 * Deterministic (no randomness beyond the simulator's id generator), spread over the 60 days
 * before the simulator's clock.
 */
import type { AirtableState, BaseDef } from './airtable-simulator.ts';

export const CRM_BASE_NAME = 'CRM';

export const CONTACT_STATUSES = ['Lead', 'Qualified', 'Customer', 'Churned'] as const;
export const DEAL_STAGES = ['Discovery', 'Proposal', 'Negotiation', 'Closed won', 'Closed lost'] as const;
export const DEAL_TAGS = ['Enterprise', 'SMB', 'Renewal', 'Upsell', 'Partner'] as const;

export const CRM_BASE: BaseDef = {
  name: CRM_BASE_NAME,
  tables: [
    {
      name: 'Companies',
      description: 'Organisations we sell to',
      fields: [
        { name: 'Name', type: 'singleLineText' },
        { name: 'Domain', type: 'singleLineText' },
        { name: 'Employees', type: 'number', options: { precision: 0 } },
        // 'Contacts' and 'Deals' are created as the inverse links of the fields below.
      ],
    },
    {
      name: 'Contacts',
      description: 'People at our companies',
      fields: [
        { name: 'Name', type: 'singleLineText' },
        { name: 'Email', type: 'email' },
        { name: 'Phone', type: 'phoneNumber' },
        { name: 'Status', type: 'singleSelect', options: { choices: [...CONTACT_STATUSES] } },
        {
          name: 'Company',
          type: 'multipleRecordLinks',
          options: { linkedTable: 'Companies', inverseName: 'Contacts', prefersSingleRecordLink: true },
        },
        { name: 'Notes', type: 'multilineText' },
        { name: 'Created', type: 'createdTime' },
        { name: 'Last Modified', type: 'lastModifiedTime' },
      ],
    },
    {
      name: 'Deals',
      description: 'Opportunities, one per company and product line',
      fields: [
        { name: 'Deal', type: 'singleLineText' },
        { name: 'Amount', type: 'currency', options: { precision: 2, symbol: '$' } },
        { name: 'Probability', type: 'percent', options: { precision: 0 } },
        { name: 'Stage', type: 'singleSelect', options: { choices: [...DEAL_STAGES] } },
        { name: 'Tags', type: 'multipleSelects', options: { choices: [...DEAL_TAGS] } },
        { name: 'Won', type: 'checkbox' },
        { name: 'Close Date', type: 'date' },
        { name: 'Last Contacted', type: 'dateTime' },
        {
          name: 'Company',
          type: 'multipleRecordLinks',
          options: { linkedTable: 'Companies', inverseName: 'Deals', prefersSingleRecordLink: true },
        },
        { name: 'Contract', type: 'multipleAttachments' },
        { name: 'Deal ID', type: 'autoNumber' },
        {
          name: 'Summary',
          type: 'formula',
          options: { formula: '{Deal} & " (" & {Stage} & ")"', resultType: 'singleLineText' },
        },
        { name: 'Created', type: 'createdTime' },
        { name: 'Last Modified', type: 'lastModifiedTime' },
      ],
    },
  ],
};

const COMPANIES: [string, string, number][] = [
  ['Acme Robotics', 'acme-robotics.com', 420],
  ['Bluebird Analytics', 'bluebird.io', 85],
  ['Cobalt Logistics', 'cobalt-logistics.com', 1250],
  ['Driftwood Studios', 'driftwood.studio', 24],
  ['Evergreen Health', 'evergreenhealth.org', 3100],
  ['Foxglove Foods', 'foxglovefoods.com', 160],
  ['Granite Capital', 'granitecap.com', 58],
  ['Harbor Freightways', 'harborfw.com', 740],
  ['Ironclad Security', 'ironclad.dev', 310],
  ['Juniper Learning', 'juniperlearning.edu', 95],
  ['Kestrel Aerospace', 'kestrel-aero.com', 2200],
  ['Lumen Energy', 'lumen.energy', 510],
];

const FIRST = [
  'Ada',
  'Ben',
  'Chloe',
  'Diego',
  'Elena',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Liam',
  'Maya',
  'Nils',
  'Olga',
  'Priya',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
  'Umar',
  'Vera',
  'Wes',
  'Ximena',
  'Yusuf',
];
const LAST = [
  'Lovelace',
  'Okafor',
  'Martin',
  'Santos',
  'Petrova',
  'Haddad',
  'Kim',
  'Tanaka',
  'Moreau',
  'Berg',
  'Adeyemi',
  'Walsh',
  'Patel',
  'Larsen',
  'Ivanova',
  'Sharma',
  'Reyes',
  'Costa',
  'Nasser',
  'Byrne',
];

const NOTES = [
  'Met at the spring trade show.\nInterested in the enterprise plan.',
  'Prefers email over phone.',
  '',
  'Asked for a security questionnaire.',
  'Follow up after the budget review in Q3.',
  '',
  'Champion for the pilot project.',
];

export type CrmSeed = {
  baseId: string;
  tables: { companies: string; contacts: string; deals: string };
  companyIds: string[];
  contactIds: string[];
  dealIds: string[];
};

/** Adds the CRM base with `contacts` contacts (default 50) and returns its ids. */
export function seedCrm(state: AirtableState, options: { contacts?: number } = {}): CrmSeed {
  const base = state.addBase(CRM_BASE);
  const now = state.clock.now();
  const day = 86_400_000;
  const companies = state.table(base.id, 'Companies');
  const contacts = state.table(base.id, 'Contacts');
  const deals = state.table(base.id, 'Deals');

  const companyIds = COMPANIES.map(
    ([name, domain, employees], i) =>
      state.createRecord(
        base.id,
        companies.id,
        { Name: name, Domain: domain, Employees: employees },
        { at: now - (60 - i) * day },
      ).id,
  );

  const contactCount = options.contacts ?? 50;
  const contactIds: string[] = [];
  for (let i = 0; i < contactCount; i++) {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    const company = COMPANIES[i % COMPANIES.length]!;
    const fields: Record<string, unknown> = {
      Name: `${first} ${last}`,
      Email: `${first}.${last}${i >= FIRST.length ? i : ''}@${company[1]}`.toLowerCase(),
      Status: CONTACT_STATUSES[i % CONTACT_STATUSES.length],
      Company: [companyIds[i % companyIds.length]],
    };
    if (i % 3 !== 2)
      fields.Phone = `+1 (555) ${String(100 + i).padStart(3, '0')}-${String(1000 + i * 37).slice(-4)}`;
    const note = NOTES[i % NOTES.length];
    if (note) fields.Notes = note;
    contactIds.push(
      state.createRecord(base.id, contacts.id, fields, { at: now - (50 - i) * day + i * 60_000 }).id,
    );
  }

  const dealIds: string[] = [];
  for (let i = 0; i < 20; i++) {
    const company = COMPANIES[i % COMPANIES.length]!;
    const stage = DEAL_STAGES[i % DEAL_STAGES.length]!;
    const fields: Record<string, unknown> = {
      Deal: `${company[0]} - ${['Platform', 'Support', 'Expansion'][i % 3]}`,
      Amount: 5000 + i * 1250.5,
      Probability: [0.1, 0.4, 0.6, 1, 0][i % 5],
      Stage: stage,
      Tags: [
        DEAL_TAGS[i % DEAL_TAGS.length],
        ...(i % 4 === 0 ? [DEAL_TAGS[(i + 2) % DEAL_TAGS.length]] : []),
      ],
      Won: stage === 'Closed won',
      'Close Date': new Date(now + (i - 5) * 7 * day).toISOString().slice(0, 10),
      'Last Contacted': new Date(now - (i + 1) * 3_600_000).toISOString(),
      Company: [companyIds[i % companyIds.length]],
    };
    if (i % 5 === 3) fields.Contract = [{ url: `https://files.example.com/contracts/deal-${i + 1}.pdf` }];
    dealIds.push(state.createRecord(base.id, deals.id, fields, { at: now - (30 - i) * day }).id);
  }

  return {
    baseId: base.id,
    tables: { companies: companies.id, contacts: contacts.id, deals: deals.id },
    companyIds,
    contactIds,
    dealIds,
  };
}
