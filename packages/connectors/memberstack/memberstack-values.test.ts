import { Webhook } from 'svix';
import { describe, expect, it } from 'vitest';
import {
  mapMemberstackError,
  memberstackErrorText,
  memberstackKeyMode,
  memberstackRateLimitWait,
} from './memberstack-api';
import {
  decodeCursor,
  encodeCursor,
  fingerprint,
  packKnown,
  randomPassword,
  unpackKnown,
} from './memberstack-connector';
import {
  customFromCanonical,
  customToCanonical,
  discoveredMemberFields,
  joinFullName,
  memberFieldRef,
  memberToRecord,
  metaFromCanonical,
  metaToCanonical,
  plansOf,
  planToRecord,
  splitFullName,
} from './memberstack-values';
import { parseMemberstackWebhook, verifyMemberstackWebhook } from './webhooks';

const member = {
  id: 'mem_abc',
  auth: { email: 'Jane@Example.com' },
  createdAt: '2024-05-19T18:57:35.143Z',
  customFields: { 'first-name': ' Jane ', country: '', age: 41 },
  metaData: { avatar: 'photo.png', score: 12.5, vip: true, tags: ['a', 'b'], gone: null },
  planConnections: [
    { id: 'con_1', planId: 'pln_free', planName: 'Free', type: 'FREE', status: 'ACTIVE' },
    { id: 'con_2', planId: 'pln_pro', planName: 'Pro', type: 'SUBSCRIPTION', status: 'CANCELED' },
  ],
};

describe('Memberstack values', () => {
  it('reads a member into canonical fields', () => {
    const r = memberToRecord(member);
    expect(r.id).toBe('mem_abc');
    expect(r.fields).toEqual({
      email: 'jane@example.com',
      plans: ['pln_free', 'pln_pro'],
      createdAt: '2024-05-19T18:57:35.143Z',
      'customFields.first-name': 'Jane',
      'customFields.country': null,
      'customFields.age': '41',
      'metaData.avatar': 'photo.png',
      'metaData.score': '12.5',
      'metaData.vip': true,
      'metaData.tags': { json: ['a', 'b'] },
      'metaData.gone': null,
      // Made of the first and last names: the first alone here.
      fullName: 'Jane',
    });
    // No first or last name custom field: no full name either.
    expect(memberToRecord({ id: 'mem_y', customFields: { company: 'Acme' } }).fields).not.toHaveProperty(
      'fullName',
    );
  });

  it('makes a full name of the first and last names, and splits one at the last space', () => {
    expect(
      memberToRecord({ id: 'm', customFields: { 'first-name': 'Mary Ann', 'last-name': ' Smith ' } }).fields
        .fullName,
    ).toBe('Mary Ann Smith');
    expect(
      memberToRecord({ id: 'm', customFields: { 'first-name': '', 'last-name': '' } }).fields.fullName,
    ).toBeNull();
    expect(joinFullName(null, 'Hopper')).toBe('Hopper');
    expect(splitFullName('Mary  Ann Smith')).toEqual(['Mary Ann', 'Smith']);
    expect(splitFullName('Cher')).toEqual(['Cher', '']);
    expect(splitFullName(null)).toEqual(['', '']);
    expect(memberFieldRef('fullName')).toEqual({ kind: 'fullName' });
  });

  it('adds the schema keys a member lacks as empty', () => {
    const r = memberToRecord(
      { id: 'mem_x', auth: { email: 'x@example.com' } },
      { custom: ['phone'], meta: ['m'] },
    );
    expect(r.fields['customFields.phone']).toBeNull();
    expect(r.fields['metaData.m']).toBeNull();
    expect(r.fields.plans).toBeNull();
  });

  it('names member fields by their remote ids', () => {
    expect(memberFieldRef('email')).toEqual({ kind: 'email' });
    expect(memberFieldRef('customFields.first-name')).toEqual({ kind: 'custom', key: 'first-name' });
    expect(memberFieldRef('metaData.a.b')).toEqual({ kind: 'meta', key: 'a.b' });
    expect(memberFieldRef('customFields.')).toBeNull();
    expect(memberFieldRef('password')).toBeNull();
  });

  it('writes custom fields as text, an empty one as ""', () => {
    expect(customFromCanonical('Jane')).toEqual({ value: 'Jane' });
    expect(customFromCanonical(null)).toEqual({ value: '' });
    expect(customFromCanonical(true)).toEqual({ value: 'true' });
    expect(customFromCanonical({ json: { a: 1 } })).toHaveProperty('problem');
    expect(customToCanonical('')).toBeNull();
    expect(customToCanonical(3)).toBe('3');
  });

  it('writes metadata by its type, a number staying a number', () => {
    expect(metaFromCanonical('12', 7)).toEqual({ value: 12 });
    expect(metaFromCanonical('12', 'seven')).toEqual({ value: '12' });
    expect(metaFromCanonical(false, undefined)).toEqual({ value: false });
    expect(metaFromCanonical({ json: { a: [1] } }, undefined)).toEqual({ value: { a: [1] } });
    expect(metaFromCanonical(null, 'x')).toEqual({ value: null });
    expect(metaToCanonical(0)).toBe('0');
    expect(metaToCanonical({ b: 1, a: 2 })).toEqual({ json: { a: 2, b: 1 } });
  });

  it('discovers custom fields as text and metadata by the types seen', () => {
    const fields = discoveredMemberFields(
      new Map([
        ['first-name', { label: 'First name' }],
        ['country', {}],
      ]),
      new Map([
        ['score', new Set(['number' as const])],
        ['mixed', new Set(['number' as const, 'text' as const])],
        ['empty', new Set()],
      ]),
    );
    const by = new Map(fields.map((f) => [f.remoteId, f]));
    expect(by.get('email')).toMatchObject({ fieldType: 'email', readOnly: false });
    expect(by.get('plans')).toMatchObject({ fieldType: 'multi_select', readOnly: true });
    expect(by.get('createdAt')).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(by.get('customFields.first-name')).toMatchObject({ name: 'First name', fieldType: 'text' });
    expect(by.get('customFields.country')?.name).toBe('country');
    expect(by.get('metaData.score')?.fieldType).toBe('number');
    expect(by.get('metaData.mixed')?.fieldType).toBe('json');
    expect(by.get('metaData.empty')?.fieldType).toBe('text');
    // A full name only when the app has both a first and a last name field.
    expect(by.has('fullName')).toBe(false);
    const both = discoveredMemberFields(
      new Map([
        ['first-name', {}],
        ['last-name', {}],
      ]),
      new Map(),
    );
    expect(both.find((f) => f.remoteId === 'fullName')).toMatchObject({
      name: 'Full name',
      fieldType: 'text',
      readOnly: false,
      options: { madeOf: ['customFields.first-name', 'customFields.last-name'] },
    });
  });

  it('finds plans in plan connections', () => {
    const plans = plansOf([member, { id: 'mem_2', planConnections: [{ planId: 'pln_free' }] }]);
    expect([...plans.keys()]).toEqual(['pln_free', 'pln_pro']);
    expect(planToRecord(plans.get('pln_pro') as never).fields).toEqual({ name: 'Pro', type: 'PAID' });
    expect(planToRecord(plans.get('pln_free') as never).fields).toEqual({ name: 'Free', type: 'FREE' });
  });
});

describe('Memberstack cursor', () => {
  it('packs and unpacks what the last pass saw', () => {
    const known = new Map([
      ['mem_1', { h: 'aaaa', p: 0 as const }],
      ['mem_2', { h: 'bbbb', p: 1 as const }],
    ]);
    expect(unpackKnown(packKnown(known))).toEqual(known);
    const c = { v: 1 as const, p: 1 as const, c: '456', k: packKnown(known) };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    expect(decodeCursor('not a cursor')).toBeNull();
    expect(decodeCursor(null)).toBeNull();
  });

  it('fingerprints change with any value', () => {
    const a = memberToRecord(member);
    const b = memberToRecord({ ...member, metaData: { ...member.metaData, vip: false } });
    expect(fingerprint(a)).toBe(fingerprint(memberToRecord(member)));
    expect(fingerprint(a)).not.toBe(fingerprint(b));
  });

  it('makes a different strong password each time', () => {
    const p = randomPassword();
    expect(p.length).toBeGreaterThanOrEqual(20);
    expect(p).not.toBe(randomPassword());
  });
});

describe('Memberstack errors', () => {
  it('tells test and live keys apart', () => {
    expect(memberstackKeyMode('sk_sb_123')).toBe('test');
    expect(memberstackKeyMode('sk_123')).toBe('live');
    expect(memberstackKeyMode('pk_123')).toBeNull();
  });

  it('reads every error body shape', () => {
    expect(memberstackErrorText({ error: 'Member not found' }).message).toBe('Member not found');
    expect(memberstackErrorText({ code: 'invalid-email', message: 'Bad email' })).toEqual({
      message: 'Bad email',
      code: 'invalid-email',
    });
    expect(memberstackErrorText({ error: { code: 'x', message: 'y' } })).toEqual({ message: 'y', code: 'x' });
  });

  it('maps statuses to codes with text a person can act on', () => {
    expect(mapMemberstackError(401, { error: 'Invalid API key' }).code).toBe('auth_invalid');
    expect(mapMemberstackError(401, {}).userFacingMessage).toMatch(/secret key/);
    const malformed = {
      code: 'validation/invalid-secret-key',
      message: 'The provided secret key is invalid.',
    };
    expect(mapMemberstackError(400, malformed).code).toBe('auth_invalid');
    expect(mapMemberstackError(404, {}).code).toBe('not_found');
    const noMember = { code: 'generic-message', message: 'There is no member with this identifier.' };
    expect(mapMemberstackError(400, noMember).code).toBe('not_found');
    const taken = mapMemberstackError(409, { error: 'Email already in use' });
    expect(taken.code).toBe('validation');
    expect(taken.userFacingMessage).toMatch(/Email already in use/);
    expect(mapMemberstackError(422, {}).code).toBe('validation');
    expect(mapMemberstackError(503, {}).code).toBe('transient');
  });

  it('waits a 429 out by what Memberstack says, else the one-second window', () => {
    const now = 1_700_000_000_000;
    expect(memberstackRateLimitWait(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(memberstackRateLimitWait(new Headers({ 'x-ratelimit-reset': String(now / 1000 + 2) }), now)).toBe(
      2000,
    );
    expect(memberstackRateLimitWait(new Headers({ 'x-ratelimit-reset': '1' }), now)).toBe(1000);
    expect(memberstackRateLimitWait(new Headers({ 'ratelimit-reset': '2' }), now)).toBe(2000);
    expect(memberstackRateLimitWait(new Headers(), now)).toBe(1000);
    const e = mapMemberstackError(429, { error: 'Too many requests' }, new Headers({ 'retry-after': '2' }), {
      now,
    });
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBe(2000);
  });
});

describe('Memberstack webhooks', () => {
  const secret = `whsec_${Buffer.from('memberstack webhook test secret!').toString('base64')}`;
  const sign = (body: string, id = 'msg_1', at = Math.floor(Date.now() / 1000)) => {
    const signature = new Webhook(secret).sign(id, new Date(at * 1000), body);
    return { 'svix-id': id, 'svix-timestamp': String(at), 'svix-signature': signature };
  };

  it('verifies Svix signatures and refuses tampered, unsigned, stale or foreign deliveries', () => {
    const body = JSON.stringify({ event: 'member.updated', timestamp: Date.now(), payload: { id: 'mem_1' } });
    const headers = sign(body);
    expect(verifyMemberstackWebhook(secret, headers, body)).toBe(true);
    expect(verifyMemberstackWebhook(secret, headers, `${body} `)).toBe(false);
    expect(verifyMemberstackWebhook(secret, { 'svix-id': 'msg_1' }, body)).toBe(false);
    expect(
      verifyMemberstackWebhook(secret, sign(body, 'msg_2', Math.floor(Date.now() / 1000) - 3600), body),
    ).toBe(false);
    const other = `whsec_${Buffer.from('another secret of the same size!').toString('base64')}`;
    expect(verifyMemberstackWebhook(other, headers, body)).toBe(false);
    expect(verifyMemberstackWebhook('', headers, body)).toBe(false);
  });

  it('parses events to the tables they change', () => {
    const h = { 'svix-id': 'msg_9' };
    expect(
      parseMemberstackWebhook(h, JSON.stringify({ event: 'member.updated', payload: { id: 'mem_1' } })),
    ).toEqual([{ eventId: 'msg_9', event: 'member.updated', tables: ['members'], memberId: 'mem_1' }]);
    expect(
      parseMemberstackWebhook(h, JSON.stringify({ event: 'member.plan.created', data: { id: 'mem_2' } }))[0],
    ).toMatchObject({ tables: ['members', 'plans'], memberId: 'mem_2' });
    expect(parseMemberstackWebhook(h, JSON.stringify({ event: 'team.created' }))).toEqual([]);
    expect(parseMemberstackWebhook(h, 'not json')).toEqual([]);
  });
});
