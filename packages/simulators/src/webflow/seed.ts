/**
 * A realistic small CRM on one Webflow site ("Lockstep CRM", two custom domains): Companies,
 * Contacts (each referencing its company) and Deals (a company, one or two contacts), using
 * every field type the simulator knows. Made over the 60 days before the simulator's clock and
 * published, except the last two contacts (drafts never published) and the first deal (a
 * published item with staged changes not yet live). Deterministic apart from the id generator.
 */
import type { FieldData, Item, WebflowState } from './model.ts';

export type CrmSeed = {
  siteId: string;
  collections: { companies: string; contacts: string; deals: string };
  companies: string[];
  contacts: string[];
  deals: string[];
};

export type SeedCounts = { companies?: number; contacts?: number; deals?: number };

const COMPANIES: [string, string, string, number, string][] = [
  ['Acme Analytics', 'acme-analytics.com', 'Software', 120, '#1f6feb'],
  ['Northwind Traders', 'northwind.example', 'Retail', 340, '#d9480f'],
  ['Globex Logistics', 'globex-logistics.com', 'Logistics', 860, '#2b8a3e'],
  ['Initech Finance', 'initech.io', 'Finance', 95, '#5f3dc4'],
  ['Umbrella Health', 'umbrella-health.org', 'Healthcare', 1500, '#c92a2a'],
  ['Stark Studios', 'starkstudios.co', 'Marketing', 42, '#e67700'],
  ['Wayne Learning', 'waynelearning.edu', 'Education', 210, '#364fc7'],
  ['Hooli Cloud', 'hooli.cloud', 'Software', 2300, '#0b7285'],
  ['Soylent Foods', 'soylentfoods.com', 'Retail', 77, '#5c940d'],
  ['Vandelay Imports', 'vandelay.example', 'Logistics', 18, '#862e9c'],
];
const INDUSTRIES = ['Software', 'Retail', 'Logistics', 'Finance', 'Healthcare', 'Marketing', 'Education'];
const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato', 'Garcia'];
const TITLES = ['CEO', 'CTO', 'Head of Sales', 'Operations Manager', 'Engineer', 'Marketing Lead'];
const STAGES = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'];
const PRODUCTS = ['Platform licence', 'Onboarding', 'Support plan', 'Expansion', 'Renewal'];

const DAY = 86_400_000;

const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Put an item's times in the past and, unless `draft`, make it live as it is. */
function backdate(item: Item, createdOn: number, lastUpdated: number, draft = false): void {
  item.createdOn = createdOn;
  item.lastUpdated = lastUpdated;
  if (draft) {
    item.isDraft = true;
    item.lastPublished = null;
    delete item.live;
    return;
  }
  const publishedAt = lastUpdated + 60_000;
  item.isDraft = false;
  item.lastPublished = publishedAt;
  item.live = { fieldData: structuredClone(item.fieldData), lastUpdated, publishedAt };
}

export function seedCrm(state: WebflowState, counts: SeedCounts = {}): CrmSeed {
  const now = state.clock.now();
  const start = now - 60 * DAY;
  const site = state.addSite({
    displayName: 'Lockstep CRM',
    shortName: 'lockstep-crm',
    customDomains: ['www.lockstep-crm.example', 'lockstep-crm.example'],
  });
  site.createdOn = start - 30 * DAY;
  site.lastUpdated = start;

  const companies = state.addCollection(site.id, {
    displayName: 'Companies',
    singularName: 'Company',
    slug: 'companies',
    fields: [
      { slug: 'website', displayName: 'Website', type: 'Link' },
      { slug: 'industry', displayName: 'Industry', type: 'Option', options: INDUSTRIES },
      { slug: 'employees', displayName: 'Employees', type: 'Number' },
      { slug: 'logo', displayName: 'Logo', type: 'Image' },
      { slug: 'brand-color', displayName: 'Brand Color', type: 'Color' },
      { slug: 'description', displayName: 'Description', type: 'RichText' },
      { slug: 'customer', displayName: 'Customer', type: 'Switch' },
    ],
  });
  const contacts = state.addCollection(site.id, {
    displayName: 'Contacts',
    singularName: 'Contact',
    slug: 'contacts',
    fields: [
      { slug: 'email', displayName: 'Email', type: 'Email', isRequired: true },
      { slug: 'phone', displayName: 'Phone', type: 'Phone' },
      { slug: 'job-title', displayName: 'Job Title', type: 'PlainText' },
      { slug: 'company', displayName: 'Company', type: 'Reference', collectionId: companies.id },
      { slug: 'headshot', displayName: 'Headshot', type: 'Image' },
      { slug: 'last-contacted', displayName: 'Last Contacted', type: 'DateTime' },
      { slug: 'newsletter', displayName: 'Newsletter', type: 'Switch' },
    ],
  });
  const deals = state.addCollection(site.id, {
    displayName: 'Deals',
    singularName: 'Deal',
    slug: 'deals',
    fields: [
      { slug: 'amount', displayName: 'Amount', type: 'Number', isRequired: true },
      { slug: 'stage', displayName: 'Stage', type: 'Option', options: STAGES },
      { slug: 'close-date', displayName: 'Close Date', type: 'DateTime' },
      { slug: 'company', displayName: 'Company', type: 'Reference', collectionId: companies.id },
      { slug: 'contacts', displayName: 'Contacts', type: 'MultiReference', collectionId: contacts.id },
      { slug: 'contract', displayName: 'Contract', type: 'File' },
      { slug: 'gallery', displayName: 'Gallery', type: 'MultiImage' },
      { slug: 'pitch-video', displayName: 'Pitch Video', type: 'VideoLink' },
    ],
  });
  for (const c of [companies, contacts, deals]) {
    c.createdOn = start - 20 * DAY;
    c.lastUpdated = start - 20 * DAY;
  }

  const seed: CrmSeed = {
    siteId: site.id,
    collections: { companies: companies.id, contacts: contacts.id, deals: deals.id },
    companies: [],
    contacts: [],
    deals: [],
  };
  const create = (collectionId: string, fieldData: FieldData): Item => {
    const [item] = state.createItems(collectionId, [{ fieldData }]);
    return item as Item;
  };

  const companyCount = counts.companies ?? COMPANIES.length;
  for (let i = 0; i < companyCount; i++) {
    const [name, domain, industry, employees, color] = COMPANIES[
      i % COMPANIES.length
    ] as (typeof COMPANIES)[number];
    const suffix = i < COMPANIES.length ? '' : ` ${Math.floor(i / COMPANIES.length) + 1}`;
    const item = create(companies.id, {
      name: `${name}${suffix}`,
      slug: slugify(`${name}${suffix}`),
      website: `https://${domain}`,
      industry: state.optionId(companies.id, 'industry', industry),
      employees,
      logo: { url: `https://assets.${domain}/logo.png` },
      'brand-color': color,
      description: `<p>${name} is a ${industry.toLowerCase()} company with ${employees} employees.</p>`,
      customer: i % 3 === 0,
    });
    backdate(item, start + i * DAY, start + i * DAY + 3_600_000);
    seed.companies.push(item.id);
  }

  const contactCount = counts.contacts ?? 50;
  for (let i = 0; i < contactCount; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const companyIndex = i % Math.max(companyCount, 1);
    const domain = (COMPANIES[companyIndex % COMPANIES.length] as (typeof COMPANIES)[number])[1];
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const created = start + 10 * DAY + Math.floor((i * 45 * DAY) / Math.max(contactCount, 1));
    const item = create(contacts.id, {
      name: `${first} ${last}${suffix ? ` ${suffix}` : ''}`,
      slug: slugify(`${first}-${last}${suffix}`),
      email: `${first}.${last}${suffix}@${domain}`.toLowerCase(),
      phone: `+1 555 01${String(i % 100).padStart(2, '0')}`,
      'job-title': TITLES[i % TITLES.length],
      ...(companyCount > 0 ? { company: seed.companies[companyIndex] } : {}),
      'last-contacted': new Date(created + 5 * DAY).toISOString(),
      newsletter: i % 2 === 0,
    });
    backdate(item, created, created + (i % 4) * DAY, i >= contactCount - 2);
    seed.contacts.push(item.id);
  }

  const dealCount = counts.deals ?? 10;
  for (let i = 0; i < dealCount; i++) {
    const companyIndex = i % Math.max(companyCount, 1);
    const companyName = (COMPANIES[companyIndex % COMPANIES.length] as (typeof COMPANIES)[number])[0];
    const created = start + 20 * DAY + i * 3 * DAY;
    const dealContacts = seed.contacts
      .filter((_, j) => j % Math.max(companyCount, 1) === companyIndex)
      .slice(0, 1 + (i % 2));
    const name = `${companyName} - ${PRODUCTS[i % PRODUCTS.length]}${i >= 10 ? ` ${i}` : ''}`;
    const item = create(deals.id, {
      name,
      slug: slugify(name),
      amount: 5000 + i * 2500,
      stage: state.optionId(deals.id, 'stage', STAGES[i % STAGES.length] as string),
      'close-date': new Date(created + 30 * DAY).toISOString(),
      ...(companyCount > 0 ? { company: seed.companies[companyIndex] } : {}),
      ...(dealContacts.length > 0 ? { contacts: dealContacts } : {}),
    });
    backdate(item, created, created + 2 * DAY);
    seed.deals.push(item.id);
  }

  // The first deal has staged changes that are not live yet ("queued to publish").
  const firstDeal = seed.deals[0];
  if (firstDeal !== undefined) {
    const item = state.item(deals.id, firstDeal);
    item.fieldData.amount = (item.fieldData.amount as number) + 1000;
    item.lastUpdated = now - DAY;
  }
  site.lastPublished = now - 2 * DAY;
  return seed;
}
