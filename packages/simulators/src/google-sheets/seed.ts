/**
 * A realistic sales spreadsheet: "Leads" (a frozen header row, dates stored as serial numbers with a
 * date format, deal sizes with a currency format, TRUE/FALSE checkboxes) and "Companies" (with a
 * formula column). A second spreadsheet the app was never granted shows what drive.file hides.
 */
import { seededRandom } from '../http.ts';
import type { GoogleSheetsState } from './google-sheets-simulator.ts';

export const LEADS_HEADER = ['Name', 'Email', 'Company', 'Stage', 'Deal size', 'Signed up', 'Newsletter'];
export const COMPANIES_HEADER = [
  'Company',
  'Domain',
  'Industry',
  'Employees',
  'Founded',
  'Annual revenue',
  'Revenue per employee',
];

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Margaret',
  'Ken',
  'Frances',
  'Linus',
  'Radia',
  'Guido',
  'Hedy',
  'John',
  'Katherine',
  'Niklaus',
  'Sophie',
  'Tim',
  'Yukihiro',
  'Anita',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Allen',
  'Torvalds',
  'Perlman',
  'van Rossum',
  'Lamarr',
  'McCarthy',
  'Johnson',
  'Wirth',
  'Wilson',
  'Berners-Lee',
  'Matsumoto',
  'Borg',
];
const COMPANIES: [string, string, string, number, string, number][] = [
  ['Acme Corp', 'acme.example', 'Manufacturing', 1200, '1948-03-01', 250_000_000],
  ['Globex', 'globex.example', 'Energy', 5400, '1989-07-15', 1_300_000_000],
  ['Initech', 'initech.example', 'Software', 310, '1996-02-19', 42_000_000],
  ['Umbrella', 'umbrella.example', 'Pharma', 15000, '1968-10-01', 9_800_000_000],
  ['Hooli', 'hooli.example', 'Internet', 32000, '1998-09-04', 41_000_000_000],
  ['Vandelay Industries', 'vandelay.example', 'Import/Export', 45, '1991-05-23', 7_500_000],
  ['Stark Industries', 'stark.example', 'Defense', 22000, '1940-05-29', 31_000_000_000],
  ['Wayne Enterprises', 'wayne.example', 'Conglomerate', 40000, '1939-05-01', 52_000_000_000],
];
const STAGES = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'];

export type SalesSeed = {
  spreadsheetId: string;
  title: string;
  /** Sheet ids: Leads is 0 (the first sheet's gid), Companies is random. */
  sheets: { leads: number; companies: number };
  /** Spreadsheet the app was never granted (drive.file cannot see it). */
  privateSpreadsheetId: string;
};

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

export function seedSales(
  state: GoogleSheetsState,
  options: { leads?: number; seed?: number } = {},
): SalesSeed {
  const random = seededRandom(options.seed ?? 7);
  const count = options.leads ?? 40;
  const leads: unknown[][] = [LEADS_HEADER];
  for (let i = 0; i < count; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[(i * 7 + Math.floor(i / FIRST.length)) % LAST.length] as string;
    const company = COMPANIES[Math.floor(random() * COMPANIES.length)] as (typeof COMPANIES)[number];
    const day = new Date(Date.UTC(2025, 0, 1) + Math.floor(random() * 380) * 86_400_000);
    leads.push([
      `${first} ${last}`,
      `${first.toLowerCase()}.${last.toLowerCase().replaceAll(' ', '')}${i > 19 ? i : ''}@${company[1]}`,
      company[0],
      STAGES[Math.floor(random() * STAGES.length)],
      // Some leads have no deal size yet: an empty cell in the middle of a row.
      i % 9 === 4 ? '' : Math.round(random() * 200) * 250,
      `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1)}-${pad(day.getUTCDate())}`,
      random() > 0.5 ? 'TRUE' : 'FALSE',
    ]);
  }
  const companies: unknown[][] = [COMPANIES_HEADER];
  for (const [i, c] of COMPANIES.entries()) companies.push([...c, `=F${i + 2}/D${i + 2}`]);
  const ss = state.addSpreadsheet({
    title: 'Sales pipeline',
    timeZone: 'America/New_York',
    sheets: [
      {
        title: 'Leads',
        sheetId: 0,
        rows: leads,
        frozenRowCount: 1,
        columnFormats: {
          4: { type: 'CURRENCY', pattern: '"$"#,##0.00' },
          5: { type: 'DATE', pattern: 'm/d/yyyy' },
        },
      },
      {
        title: 'Companies',
        rows: companies,
        frozenRowCount: 1,
        columnFormats: {
          3: { type: 'NUMBER', pattern: '#,##0' },
          4: { type: 'DATE', pattern: 'yyyy-mm-dd' },
          5: { type: 'CURRENCY', pattern: '"$"#,##0.00' },
          6: { type: 'CURRENCY', pattern: '"$"#,##0.00' },
        },
      },
    ],
  });
  const hidden = state.addSpreadsheet({
    title: 'Budget 2026 (not shared with the app)',
    openedByApp: false,
    sheets: [
      {
        title: 'Budget',
        rows: [
          ['Line', 'Amount'],
          ['Rent', 24000],
          ['Payroll', 410000],
        ],
      },
    ],
  });
  return {
    spreadsheetId: ss.spreadsheetId,
    title: ss.title,
    sheets: { leads: 0, companies: (ss.sheets[1] as { sheetId: number }).sheetId },
    privateSpreadsheetId: hidden.spreadsheetId,
  };
}
