import { describe, expect, it } from 'vitest';
import {
  type AutomapColumn,
  automapFields,
  automapTables,
  compareFieldNames,
  compareTableNames,
  nameKey,
  type TableInfo,
} from './automap';

const col = (name: string, type = 'text', extra: Partial<AutomapColumn> = {}): AutomapColumn => ({
  id: extra.id ?? name,
  name,
  type,
  ...extra,
});
const table = (name: string, columns: AutomapColumn[]): TableInfo => ({ id: name, name, columns });
const pairs = (r: { proposals: { leftColumnId: string; rightColumnId: string }[] }) =>
  r.proposals.map((p) => `${p.leftColumnId}=${p.rightColumnId}`).sort();

describe('names', () => {
  it('normalises case, spacing, camelCase, snake_case and plurals', () => {
    expect(nameKey('First Name')).toBe('firstname');
    expect(nameKey('firstName')).toBe('firstname');
    expect(nameKey('first_names')).toBe('firstname');
    expect(nameKey('  Companies ')).toBe('company');
    expect(compareTableNames('Contacts', 'contact').kind).toBe('exact');
    expect(compareTableNames('people', 'Person').kind).toBe('exact');
  });

  it('knows synonyms, similar names, and not-similar names', () => {
    expect(compareTableNames('contacts', 'subscribers')).toMatchObject({ kind: 'synonym' });
    expect(compareTableNames('companies', 'organisations')).toMatchObject({ kind: 'synonym' });
    expect(compareTableNames('deals', 'Opportunities')).toMatchObject({ kind: 'synonym' });
    expect(compareTableNames('contacts', 'companies').kind).toBe('none');
    expect(compareFieldNames('email', 'Email Address').kind).toBe('synonym');
    expect(compareFieldNames('firstName', 'given_name').kind).toBe('synonym');
    expect(compareFieldNames('created_at', 'signup_date').kind).toBe('synonym');
    expect(compareFieldNames('adress', 'address').kind).toBe('similar');
    expect(compareFieldNames('billing_email', 'email').kind).toBe('similar');
    // Sharing only a generic word is not similarity.
    expect(compareFieldNames('first_name', 'last_name').kind).toBe('none');
    expect(compareFieldNames('created_at', 'updated_at').kind).toBe('none');
    // Spelled alike but known as different things (a region, a status): not a typo of each other.
    expect(compareFieldNames('State', 'stage').kind).toBe('none');
    expect(compareFieldNames('stage', 'Stage ').kind).toBe('exact');
  });
});

describe('automapFields', () => {
  it('prefers an exact name over a similar one, one-to-one', () => {
    const r = automapFields([col('email'), col('name')], [col('email_address'), col('email'), col('Name')]);
    expect(pairs(r)).toEqual(['email=email', 'name=Name']);
    const email = r.proposals.find((p) => p.leftColumnId === 'email');
    expect(email).toMatchObject({ nameMatch: 'exact', supported: true, syncDirection: 'both' });
    expect(r.unmatchedRight.map((c) => c.columnId)).toEqual(['email_address']);
    // No column is used twice.
    const right = r.proposals.map((p) => p.rightColumnId);
    expect(new Set(right).size).toBe(right.length);
  });

  it('maps synonyms across naming styles', () => {
    const r = automapFields(
      [col('firstName'), col('lastName'), col('Mobile', 'phone'), col('Organisation')],
      [col('given_name'), col('surname'), col('phone_number', 'phone'), col('company')],
    );
    expect(pairs(r)).toEqual([
      'Mobile=phone_number',
      'Organisation=company',
      'firstName=given_name',
      'lastName=surname',
    ]);
  });

  it("pairs a field labelled with its table's noun with the bare name ('Company name' in Companies is name)", () => {
    const hubspot = [col('Company name'), col('Company domain name'), col('Deal stage')];
    const crm = [col('name'), col('domain'), col('stage')];
    const r = automapFields(hubspot, crm, {}, { tableNames: { left: 'Companies', right: 'companies' } });
    expect(pairs(r)).toContain('Company name=name');
    expect(r.proposals.find((p) => p.leftColumnId === 'Company name')?.nameMatch).toBe('exact');
    // Only the table's own noun goes: in Deals, "Deal stage" is exactly "stage".
    expect(r.proposals.find((p) => p.leftColumnId === 'Deal stage')?.nameMatch).not.toBe('exact');
    const deals = automapFields(
      [col('Deal stage')],
      [col('stage')],
      {},
      { tableNames: { left: 'Deals', right: 'deals' } },
    );
    expect(deals.proposals.map((p) => [p.leftColumnId, p.nameMatch])).toEqual([['Deal stage', 'exact']]);
    // Without table names, nothing changes.
    expect(pairs(automapFields([col('Company name')], [col('name')]))).toEqual([]);
  });

  it('never proposes an incompatible pair unless asked, and then flags it', () => {
    const left = [col('photo', 'attachments'), col('amount', 'number')];
    const right = [col('photo', 'number'), col('amount', 'boolean')];
    expect(automapFields(left, right).proposals).toEqual([]);
    const flagged = automapFields(left, right, {}, { allowUnsupported: true });
    expect(flagged.proposals.length).toBeGreaterThan(0);
    expect(flagged.proposals.every((p) => p.supported === false && p.compatibilityNote)).toBe(true);
    // Compatible but different types are proposed, scored below the same type.
    const r = automapFields(
      [col('score', 'number'), col('total', 'number')],
      [col('score', 'text'), col('total', 'number')],
    );
    const score = r.proposals.find((p) => p.leftColumnId === 'score');
    const total = r.proposals.find((p) => p.leftColumnId === 'total');
    expect(score?.supported).toBe(true);
    expect(score?.score).toBeLessThan(total?.score ?? 0);
  });

  it('lets overlapping sample values decide between similar names, and find a pair by values alone', () => {
    const left = [col('contact', 'text', { id: 'l1' }), col('mail', 'text', { id: 'l2' })];
    const right = [
      col('contact_name', 'text', { id: 'r1' }),
      col('contact_email', 'text', { id: 'r2' }),
      col('xyz', 'text', { id: 'r3' }),
    ];
    const emails = ['a@x.com', 'b@x.com', 'c@x.com', 'd@x.com', 'e@x.com', 'f@x.com'];
    const names = ['Ada', 'Grace', 'Alan', 'Linus', 'Ken', 'Tim'];
    const withoutSamples = automapFields([left[0] as AutomapColumn], right);
    const withSamples = automapFields([left[0] as AutomapColumn], right, {
      left: { l1: emails.map((e) => e.toUpperCase()) },
      right: { r1: names, r2: [...emails.slice(0, 5), 'z@x.com'] },
    });
    expect(withSamples.proposals).toHaveLength(1);
    expect(withSamples.proposals[0]).toMatchObject({ rightColumnId: 'r2' });
    expect(withSamples.proposals[0]?.sampleOverlap).toBeGreaterThan(0.5);
    const before = withoutSamples.proposals.find((p) => p.rightColumnId === 'r2')?.score ?? 0;
    expect(withSamples.proposals[0]?.score).toBeGreaterThan(before);
    expect(withSamples.proposals[0]?.explanation).toMatch(/sample values in common/);
    // No name in common, but the values are the same: proposed on the values.
    const byValue = automapFields([left[1] as AutomapColumn], [right[2] as AutomapColumn], {
      left: { l2: emails },
      right: { r3: emails },
    });
    expect(byValue.proposals).toHaveLength(1);
    expect(byValue.proposals[0]).toMatchObject({
      leftColumnId: 'l2',
      rightColumnId: 'r3',
      nameMatch: 'none',
    });
    // Yes/no values always overlap; that alone proposes nothing.
    const flags = automapFields([col('vip', 'boolean')], [col('active', 'boolean')], {
      left: { vip: [true, false, true] },
      right: { active: [false, true, true] },
    });
    expect(flags.proposals).toEqual([]);
  });

  it('sends one way from a read-only column, both ways between writable ones', () => {
    const r = automapFields(
      [col('total', 'number', { readOnly: true }), col('name')],
      [col('total', 'number'), col('name')],
    );
    expect(r.proposals.find((p) => p.leftColumnId === 'total')).toMatchObject({
      syncDirection: 'left_to_right',
    });
    expect(r.proposals.find((p) => p.leftColumnId === 'total')?.compatibilityNote).toMatch(/read-only/);
    expect(r.proposals.find((p) => p.leftColumnId === 'name')?.syncDirection).toBe('both');
    const rightRo = automapFields([col('total', 'number')], [col('Total', 'number', { readOnly: true })]);
    expect(rightRo.proposals[0]?.syncDirection).toBe('right_to_left');
    // Both read-only: nothing can flow, not proposed.
    expect(
      automapFields([col('x', 'text', { readOnly: true })], [col('x', 'text', { readOnly: true })]).proposals,
    ).toEqual([]);
  });

  it('on a tie prefers the field that syncs both ways to a read-only one listed first', () => {
    // Salesforce contacts: the read-only compound "Full Name" and the writable "Full name" made of
    // first and last name; the Demo CRM's full_name and its read-only upper-case copy.
    const left = [
      col('Name', 'text', { name: 'Full Name', readOnly: true }),
      col('FirstName+LastName', 'text', { name: 'Full name' }),
    ];
    const right = [col('full_name'), col('full_name_upper', 'text', { readOnly: true })];
    const r = automapFields(left, right);
    expect(r.proposals.find((p) => p.rightColumnId === 'full_name')).toMatchObject({
      leftColumnId: 'FirstName+LastName',
      syncDirection: 'both',
    });
    // The same on the right side.
    const flipped = automapFields(right, left);
    expect(flipped.proposals.find((p) => p.leftColumnId === 'full_name')?.rightColumnId).toBe(
      'FirstName+LastName',
    );
  });

  it("does not pair the apps' own record ids or foreign keys, unless the values overlap", () => {
    const r = automapFields(
      [
        col('id', 'number', { readOnly: true, primaryKey: true }),
        col('company_id', 'number', { options: { references: 'public.companies.id' } }),
        col('email'),
      ],
      [
        col('id', 'text', { primaryKey: true }),
        col('organisation_id', 'text', { options: { references: 'public.organisations.id' } }),
        col('email'),
      ],
    );
    expect(pairs(r)).toEqual(['email=email']);
    expect(r.unmatchedLeft.find((c) => c.columnId === 'id')?.reason).toMatch(/record id/);
    const ids = ['A1', 'A2', 'A3', 'A4', 'A5', 'A6'];
    const shared = automapFields([col('id', 'text', { primaryKey: true })], [col('external_id')], {
      left: { id: ids },
      right: { external_id: ids },
    });
    expect(pairs(shared)).toEqual(['id=external_id']);
  });

  it('chooses a unique-looking email as the match field', () => {
    const left = [col('full_name'), col('email_address', 'email'), col('stage', 'single_select')];
    const right = [col('name'), col('email', 'email'), col('status', 'single_select')];
    const r = automapFields(left, right, {
      left: {
        email_address: ['a@x.com', 'b@x.com', 'c@x.com', 'q@x.com'],
        full_name: ['Ada', 'Ada', 'Bob', 'Cy'],
        stage: ['lead', 'lead', 'customer', 'lead'],
      },
      right: {
        email: ['A@x.com ', 'b@x.com', 'z@x.com', 'y@x.com'],
        name: ['Ada', 'Bob', 'Bob', 'Di'],
        status: ['lead', 'churned', 'lead', 'lead'],
      },
    });
    expect(r.matchField).toMatchObject({ leftColumnId: 'email_address', rightColumnId: 'email' });
    expect(r.matchField?.explanation).toMatch(/unique/);
    // Without an identifying field, no match field is proposed.
    expect(automapFields([col('name')], [col('name')]).matchField).toBeNull();
    // Repeating values disqualify an email column.
    const dup = automapFields([col('email')], [col('email')], {
      left: { email: ['a@x.com', 'a@x.com', 'b@x.com'] },
      right: { email: ['a@x.com', 'b@x.com', 'c@x.com'] },
    });
    expect(dup.matchField).toBeNull();
  });
});

describe('match field from sample values', () => {
  const companies = ['Enigma Labs', 'Kernel Co', 'Apollo Software', 'Unix Systems', 'Bell Research'];
  const tableNames = { left: 'companies', right: 'organisations' };

  it('proposes names that are unique on both sides and exist on both, with a reason', () => {
    const r = automapFields(
      [col('name'), col('domain')],
      [col('name'), col('website')],
      {
        left: {
          name: [...companies, 'Only In CRM'],
          domain: companies.map((c) => `${c}.com`).concat('x.com'),
        },
        right: {
          name: companies.map((c) => ` ${c.toUpperCase()}`),
          website: companies.map((c) => `https://${c}.org`),
        },
      },
      { tableNames },
    );
    expect(r.matchField).toMatchObject({
      leftColumnId: 'name',
      rightColumnId: 'name',
      secondaryLeftColumnId: null,
      secondaryRightColumnId: null,
    });
    expect(r.matchField?.reason).toBe(
      '5 of 5 organisation names also exist in companies; unique on both sides',
    );
  });

  it('prefers emails over names when both overlap', () => {
    const emails = ['ada@x.com', 'grace@x.com', 'alan@x.com', 'linus@x.com'];
    const names = ['Ada L', 'Grace H', 'Alan T', 'Linus T'];
    const r = automapFields([col('full_name'), col('email', 'email')], [col('name'), col('email', 'email')], {
      left: { full_name: names, email: emails },
      right: { name: names, email: emails.map((e) => e.toUpperCase()) },
    });
    expect(r.matchField).toMatchObject({ leftColumnId: 'email', rightColumnId: 'email' });
    expect(r.matchField?.reason).toMatch(/^4 of 4 emails on the left also exist on the right/);
  });

  it('proposes nothing when the values do not meet', () => {
    const r = automapFields([col('name')], [col('name')], {
      left: { name: companies },
      right: { name: ['Other One', 'Other Two', 'Other Three'] },
    });
    expect(r.matchField).toBeNull();
  });

  it('does not propose alone a column that repeats on one side', () => {
    const r = automapFields([col('name')], [col('name')], {
      left: { name: [...companies, 'Kernel Co'] },
      right: { name: companies },
    });
    expect(r.matchField).toBeNull();
  });

  it('adds a second field when the first alone repeats (first + last name)', () => {
    const first = ['Ada', 'Ada', 'Grace', 'Grace', 'Alan'];
    const last = ['Lovelace', 'Hopper', 'Hopper', 'Lovelace', 'Turing'];
    const r = automapFields(
      [col('first_name'), col('last_name')],
      [col('given_name'), col('surname')],
      { left: { first_name: first, last_name: last }, right: { given_name: first, surname: last } },
      { tableNames: { left: 'contacts', right: 'people' } },
    );
    expect(r.matchField).toMatchObject({
      leftColumnId: 'first_name',
      rightColumnId: 'given_name',
      secondaryLeftColumnId: 'last_name',
      secondaryRightColumnId: 'surname',
    });
    expect(r.matchField?.reason).toMatch(
      /^5 of 5 contact first name \+ last name pairs also exist in people/,
    );
    expect(r.matchField?.reason).toMatch(/first_name alone repeats in contacts and people/);
  });

  it('falls back to names and types without samples', () => {
    const r = automapFields([col('email', 'email'), col('name')], [col('email', 'email'), col('name')]);
    expect(r.matchField).toMatchObject({ leftColumnId: 'email', secondaryLeftColumnId: null });
    expect(r.matchField?.reason).toMatch(/email addresses identify/);
  });
});

describe('automapTables', () => {
  const crm = [
    table('companies', [
      col('id', 'number', { primaryKey: true }),
      col('name'),
      col('domain'),
      col('employees', 'number'),
    ]),
    table('contacts', [
      col('id', 'number', { primaryKey: true }),
      col('email'),
      col('full_name'),
      col('phone'),
      col('notes'),
    ]),
    table('deals', [col('id', 'number', { primaryKey: true }), col('title'), col('amount', 'number')]),
  ];
  const newsletter = [
    table('organisations', [col('id', 'text', { primaryKey: true }), col('name'), col('website')]),
    table('subscribers', [
      col('id', 'text', { primaryKey: true }),
      col('email'),
      col('name'),
      col('tags', 'multi_select'),
    ]),
  ];

  it('pairs synonyms one-to-one and leaves the rest unmatched', () => {
    const r = automapTables(crm, newsletter);
    expect(r.proposals.map((p) => `${p.leftTableId}=${p.rightTableId}`).sort()).toEqual([
      'companies=organisations',
      'contacts=subscribers',
    ]);
    expect(r.unmatchedLeft.map((t) => t.tableId)).toEqual(['deals']);
    const people = r.proposals.find((p) => p.leftTableId === 'contacts');
    expect(people?.explanation).toMatch(/synonyms: contacts ~ subscribers/);
    expect(people?.explanation).toMatch(/2 of 3 fields match/);
  });

  it('gives each table pair its match field from the samples, with a reason', () => {
    const names = ['Kernel Co', 'Unix Systems', 'Bell Research'];
    const r = automapTables(crm, newsletter, {
      samples: {
        companies: { name: [...names, 'Enigma Labs'], domain: ['k.com', 'u.com', 'b.com', 'e.com'] },
        organisations: { name: names, website: ['https://k.org', 'https://u.org', 'https://b.org'] },
      },
    });
    const orgs = r.proposals.find((p) => p.leftTableId === 'companies');
    expect(orgs?.matchField).toMatchObject({ leftColumnId: 'name', rightColumnId: 'name' });
    expect(orgs?.matchField?.reason).toBe(
      '3 of 3 organisation names also exist in companies; unique on both sides',
    );
    // Without samples, emails still go by their names.
    expect(
      automapTables(crm, newsletter).proposals.find((p) => p.leftTableId === 'contacts')?.matchField,
    ).toMatchObject({ leftColumnId: 'email', rightColumnId: 'email' });
  });

  it('puts the same name ahead of a synonym', () => {
    const r = automapTables(
      [table('Contacts', [col('email')])],
      [table('subscribers', [col('email')]), table('contact', [col('email')])],
    );
    expect(r.proposals).toHaveLength(1);
    expect(r.proposals[0]).toMatchObject({ rightTableId: 'contact', nameMatch: 'exact' });
    expect(r.proposals[0]?.explanation).toMatch(/same name/);
  });

  it('pairs tables by their fields when the names say nothing, and not below the threshold', () => {
    const left = [table('tbl_a', [col('email'), col('first_name'), col('last_name'), col('phone')])];
    const right = [
      table('sheet1', [col('Email'), col('First Name'), col('Last Name'), col('Phone')]),
      table('sheet2', [col('sku'), col('price', 'number')]),
    ];
    const r = automapTables(left, right);
    expect(r.proposals).toHaveLength(1);
    expect(r.proposals[0]).toMatchObject({ rightTableId: 'sheet1', nameMatch: 'none', fieldsMatched: 4 });
    expect(r.proposals[0]?.explanation).toBe('4 of 4 fields match');
    expect(r.unmatchedRight.map((t) => t.tableId)).toEqual(['sheet2']);
  });

  it('does not pair unrelated tables by one shared field alone (a name)', () => {
    const plans = table('Plans', [col('id', 'text', { primaryKey: true }), col('Name'), col('Type')]);
    const r = automapTables([plans], newsletter);
    expect(r.proposals).toEqual([]);
    expect(r.unmatchedLeft.map((t) => t.tableId)).toEqual(['Plans']);
    // Two shared fields still pair them.
    const twice = table('Plans', [col('Name'), col('Website', 'url')]);
    expect(automapTables([twice], newsletter).proposals).toMatchObject([{ rightTableId: 'organisations' }]);
  });
});
