import { describe, expect, it } from 'vitest';
import type { DiscoveredField } from '../../connectors/connector-port';
import { checkConfig, proposeFields, sourceNames } from './configure';

const field = (remoteId: string, name: string, fieldType = 'text'): DiscoveredField => ({
  remoteId,
  name,
  fieldType,
  readOnly: false,
  options: {},
});

describe('proposed blended fields', () => {
  it('aligns fields across sources by name and synonyms, and keeps unmatched ones as fields of their own', () => {
    const fields = proposeFields(
      [
        [field('email', 'email', 'email'), field('name', 'name'), field('city', 'city')],
        [
          field('fldE', 'Email', 'email'),
          field('fldN', 'Full name'),
          field('fldS', 'Status', 'single_select'),
        ],
      ],
      [{}, {}],
    );
    expect(fields.map((f) => [f.name, f.sourceFields])).toEqual([
      ['email', ['email', 'fldE']],
      ['name', ['name', 'fldN']],
      ['city', ['city', null]],
      ['Status', [null, 'fldS']],
    ]);
    expect(fields[3]?.type).toBe('single_select');
  });

  it('pairs fields whose names differ when their sample values overlap', () => {
    const emails = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test', 'f@x.test'];
    const fields = proposeFields(
      [[field('contact', 'contact', 'text')], [field('fldQ', 'primary', 'text')]],
      [{ contact: emails }, { fldQ: emails }],
    );
    expect(fields.map((f) => f.sourceFields)).toEqual([['contact', 'fldQ']]);
  });

  it('passes a type a blended table does not carry as json', () => {
    expect(proposeFields([[field('x', 'x', 'app_special')], []], [{}, {}])[0]?.type).toBe('json');
  });
});

describe('source names', () => {
  it('are table names, told apart by connection, then by position', () => {
    expect(
      sourceNames([
        { table: 'Contacts', connection: 'EU' },
        { table: 'Contacts', connection: 'US' },
        { table: 'people', connection: 'PG' },
        { table: 'people', connection: 'PG' },
      ]),
    ).toEqual(['Contacts (EU)', 'Contacts (US)', 'people (PG) #3', 'people (PG) #4']);
  });
});

describe('checking a field list', () => {
  const sources = [
    {
      connectionId: 'c1',
      baseRemoteId: 'b',
      tableRemoteId: 't1',
      name: 'A',
      fields: [field('email', 'email')],
    },
    {
      connectionId: 'c2',
      baseRemoteId: 'b',
      tableRemoteId: 't2',
      name: 'B',
      fields: [field('mail', 'mail')],
    },
  ];
  const ok = {
    name: 'Email',
    type: 'email' as const,
    sourceFields: ['email', 'mail'],
    options: {},
    readOnly: false,
  };

  it('gives the fields stable ids', () => {
    expect(checkConfig(sources, [ok]).map((f) => f.id)).toEqual(['f1']);
  });

  it('refuses a source field that does not exist, a reserved or repeated name, and a bad default source', () => {
    expect(() => checkConfig(sources, [{ ...ok, sourceFields: ['email', 'nope'] }])).toThrow(
      /B has no field nope/,
    );
    expect(() => checkConfig(sources, [{ ...ok, name: 'source' }])).toThrow(/rename this field/);
    expect(() => checkConfig(sources, [ok, ok])).toThrow(/Two fields are named Email/);
    expect(() => checkConfig(sources, [{ ...ok, sourceFields: [null, null] }])).toThrow(
      /comes from no source/,
    );
    expect(() => checkConfig(sources, [ok], 2)).toThrow(/default source/);
    expect(() => checkConfig([sources[0], { ...sources[0], name: 'C' }] as typeof sources, [ok])).toThrow(
      /same table is chosen twice/,
    );
  });
});
