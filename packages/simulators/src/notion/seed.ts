/**
 * A realistic Notion workspace: a "CRM" database whose "People" data source relates to a
 * "Companies" data source (two-way), with a status, tags, a score, rich-text notes, a sign-up date,
 * a formula, created/last edited times and a unique id.
 */
import { seededRandom } from '../http.ts';
import type { DataSourceState, NotionState } from './notion-simulator.ts';
import type { RichText } from './properties.ts';
import { DEFAULT_ANNOTATIONS } from './properties.ts';

export type NotionSeed = {
  peopleDatabaseId: string;
  companiesDatabaseId: string;
  peopleDataSourceId: string;
  companiesDataSourceId: string;
  personIds: string[];
  companyIds: string[];
};

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Linus'];
const LAST = [
  'Hopper',
  'Turing',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Torvalds',
  'Dijkstra',
  'Kay',
];
const COMPANIES: [string, string, string, number, boolean][] = [
  ['Acme Corp', 'Manufacturing', 'https://acme.example.com', 1200, true],
  ['Globex', 'Energy', 'https://globex.example.com', 560, true],
  ['Initech', 'Software', 'https://initech.example.com', 85, false],
  ['Umbrella', 'Pharma', 'https://umbrella.example.com', 9000, true],
  ['Hooli', 'Software', 'https://hooli.example.com', 20000, true],
  ['Vandelay Industries', 'Import/Export', 'https://vandelay.example.com', 12, false],
  ['Stark Industries', 'Manufacturing', 'https://stark.example.com', 4300, true],
  ['Wayne Enterprises', 'Conglomerate', 'https://wayne.example.com', 15000, true],
];
const STATUSES = ['Lead', 'Contacted', 'Active', 'Customer', 'Churned'];
const TAGS = ['VIP', 'Newsletter', 'Partner', 'Beta', 'Enterprise', 'Referral'];

const text = (
  content: string,
  annotations: Partial<typeof DEFAULT_ANNOTATIONS> = {},
  url?: string,
): RichText => ({
  type: 'text',
  text: { content, link: url ? { url } : null },
  annotations: { ...DEFAULT_ANNOTATIONS, ...annotations },
  plain_text: content,
  href: url ?? null,
});

export function seedWorkspace(
  state: NotionState,
  options: { people?: number; seed?: number } = {},
): NotionSeed {
  const random = seededRandom(options.seed ?? 7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const count = options.people ?? 40;
  const now = state.clock.now();
  const day = 86_400_000;

  const companies = state.addDatabase({
    title: 'Companies',
    properties: [
      { name: 'Name', type: 'title' },
      { name: 'Website', type: 'url' },
      { name: 'Phone', type: 'phone_number' },
      { name: 'Industry', type: 'select', options: [...new Set(COMPANIES.map((c) => c[1]))] },
      { name: 'Employees', type: 'number', format: 'number_with_commas' },
      { name: 'Public', type: 'checkbox' },
    ],
  });
  const companiesDs = companies.dataSource;

  const people = state.addDatabase({
    title: 'People',
    properties: [
      { name: 'Name', type: 'title' },
      { name: 'Email', type: 'email' },
      {
        name: 'Company',
        type: 'relation',
        dataSourceId: companiesDs.id,
        syncedPropertyName: 'People',
      },
      {
        name: 'Status',
        type: 'status',
        options: STATUSES,
        groups: [
          { name: 'To-do', options: ['Lead'] },
          { name: 'In progress', options: ['Contacted', 'Active'] },
          { name: 'Complete', options: ['Customer', 'Churned'] },
        ],
      },
      { name: 'Tags', type: 'multi_select', options: TAGS },
      { name: 'Score', type: 'number' },
      { name: 'Notes', type: 'rich_text' },
      { name: 'Signed up', type: 'date' },
      { name: 'Phone', type: 'phone_number' },
      { name: 'Website', type: 'url' },
      { name: 'Newsletter', type: 'checkbox' },
      { name: 'Owner', type: 'people' },
      {
        name: 'Temperature',
        type: 'formula',
        expression: 'if(prop("Score") >= 80, "Hot", if(prop("Score") >= 50, "Warm", "Cold"))',
        compute: (read) => {
          const score = read('Score');
          if (typeof score !== 'number') return { type: 'string', string: null };
          return { type: 'string', string: score >= 80 ? 'Hot' : score >= 50 ? 'Warm' : 'Cold' };
        },
      },
      { name: 'Created', type: 'created_time' },
      { name: 'Last edited', type: 'last_edited_time' },
      { name: 'Created by', type: 'created_by' },
      { name: 'ID', type: 'unique_id', prefix: 'PPL' },
    ],
  });
  const peopleDs = people.dataSource;
  // A rollup on Companies over the synced relation (exists only once People is wired).
  state.addProperty(companiesDs, { name: 'People count', type: 'rollup', relationProperty: 'People' });

  const companyIds: string[] = [];
  for (const [i, [name, industry, website, employees, isPublic]] of COMPANIES.entries()) {
    const page = state.createPage(companiesDs.id, {
      Name: name,
      Industry: industry,
      Website: website,
      Employees: employees,
      Public: isPublic,
      Phone: `+1 555 01${String(i).padStart(2, '0')}`,
    });
    backdate(page, now - (120 - i) * day, now - (60 - i) * day);
    companyIds.push(page.id);
  }

  const personIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const n = i >= FIRST.length * LAST.length ? ` ${i}` : '';
    const tags = TAGS.filter(() => random() < 0.25);
    const notes: RichText[] =
      i % 3 === 0
        ? [
            text('Met at '),
            text('NotionConf', { bold: true }),
            text('; follow up in '),
            text('Q3', { italic: true }),
          ]
        : i % 3 === 1
          ? [text('Prefers email. See '), text('the brief', {}, 'https://example.com/brief')]
          : [];
    const page = state.createPage(peopleDs.id, {
      Name: `${first} ${last}${n}`,
      Email: `${first}.${last}${n.trim()}@example.com`.toLowerCase(),
      Company: i % 7 === 6 ? [] : [companyIds[i % companyIds.length] as string],
      Status: pick(STATUSES),
      Tags: tags,
      Score: Math.round(random() * 100),
      Notes: { rich_text: notes },
      'Signed up': `2025-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}`,
      Newsletter: random() < 0.5,
      Owner: i % 4 === 0 ? [state.personId] : [],
    });
    backdate(page, now - (90 - (i % 90)) * day - i * 60_000, now - (30 - (i % 30)) * day);
    personIds.push(page.id);
  }
  // Seeding is not an edit anyone should hear about.
  for (const sub of state.subscriptions.values()) sub.pending.length = 0;
  for (const id of companyIds) backdate(state.page(id), state.page(id).createdTime, now - 10 * day);

  return {
    peopleDatabaseId: people.database.id,
    companiesDatabaseId: companies.database.id,
    peopleDataSourceId: peopleDs.id,
    companiesDataSourceId: companiesDs.id,
    personIds,
    companyIds,
  };
}

function backdate(
  page: { createdTime: number; lastEditedTime: number },
  created: number,
  edited: number,
): void {
  page.createdTime = created;
  page.lastEditedTime = Math.max(created, edited);
}

export type { DataSourceState };
