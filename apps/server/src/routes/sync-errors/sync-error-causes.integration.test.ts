import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, apiAs } from '../../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../../test/test-app';

// Issues grouped by cause: many records refused for one reason are one row with a count, and the
// group's filters list exactly its issues.
let t: TestApp;
let api: Api;
let other: Api;
let coreBaseId = '';
let ownerId = '';
let auth: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  const user = await signUp(t.app, 'causes@test.test');
  ownerId = user.userId;
  auth = user.auth;
  api = apiAs(t.app, user.auth);
  other = apiAs(t.app, (await signUp(t.app, 'someone-else@test.test')).auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
  coreBaseId = (await api('POST', '/rest/core-bases', { name: 'Causes' })).id;
  const issue = (remoteId: string, code: string, message: string, side: 'left' | 'right') => ({
    owner_id: ownerId,
    core_base_id: coreBaseId,
    side,
    remote_id: remoteId,
    code,
    message,
    user_facing_message: message,
    details: JSON.stringify({ tableMappingId: null }),
  });
  await t.ctx.db
    .insertInto('sync_error')
    .values([
      ...Array.from({ length: 58 }, (_, i) =>
        issue(`rec${i}`, 'unmapped_option', '"Lead" is not an option of lifecycle_stage', 'right'),
      ),
      issue('rec100', 'validation', 'A contact needs a name', 'left'),
      issue('rec101', 'validation', 'A contact needs a name', 'left'),
    ])
    .execute();
});
afterAll(async () => t?.close());

const causes = (filters: object) =>
  `/rest/sync-errors/by-cause?filters=${encodeURIComponent(JSON.stringify(filters))}`;

describe('issues by cause', () => {
  it('groups issues that share a cause, largest first, with a few of their records', async () => {
    const page = await api('GET', causes({ coreBaseId, status: 'open' }));
    expect(page.total).toBe(2);
    expect(
      page.items.map((c: { userFacingMessage: string; count: number }) => [c.userFacingMessage, c.count]),
    ).toEqual([
      ['"Lead" is not an option of lifecycle_stage', 58],
      ['A contact needs a name', 2],
    ]);
    expect(page.items[0]).toMatchObject({ code: 'unmapped_option', side: 'right', coreBaseId });
    expect(page.items[0].remoteIds).toHaveLength(5);
  });

  it("lists one group's issues with its filters, and finds issues by words", async () => {
    const group = { coreBaseId, code: 'validation', side: 'left', message: 'A contact needs a name' };
    const list = await api('GET', `/rest/sync-errors?filters=${encodeURIComponent(JSON.stringify(group))}`);
    expect(list.items.map((i: { remoteId: string }) => i.remoteId).sort()).toEqual(['rec100', 'rec101']);
    const found = await api('GET', causes({ coreBaseId, search: 'LIFECYCLE' }));
    expect(found.items.map((c: { count: number }) => c.count)).toEqual([58]);
    // A % in the words is a character, not a wildcard.
    expect((await api('GET', causes({ coreBaseId, search: '%' }))).total).toBe(0);
  });

  it("shows nobody else's issues", async () => {
    expect((await other('GET', causes({}))).total).toBe(0);
    await expect(other('GET', causes({ coreBaseId }))).rejects.toThrow(/404/);
  });
});

describe('issue filters as typed query parameters', () => {
  const viaJson = (filters: object) => `filters=${encodeURIComponent(JSON.stringify(filters))}`;
  const typed = (filters: Record<string, string>) => new URLSearchParams(filters).toString();
  const remoteIds = async (as: Api, query: string) =>
    (await as('GET', `/rest/sync-errors?take=200&${query}`)).items.map(
      (i: { remoteId: string }) => i.remoteId,
    );

  it('filter the issues and their causes the same as the JSON filters', async () => {
    const group = { coreBaseId, code: 'validation', side: 'left', message: 'A contact needs a name' };
    expect((await remoteIds(api, typed(group))).sort()).toEqual(['rec100', 'rec101']);
    const cases: Record<string, string>[] = [
      group,
      { coreBaseId, status: 'open' },
      { search: 'lifecycle' },
      { side: 'right' },
    ];
    for (const filters of cases) {
      expect(await remoteIds(api, typed(filters))).toEqual(await remoteIds(api, viaJson(filters)));
      const byCause = await api('GET', `/rest/sync-errors/by-cause?${typed(filters)}`);
      expect(byCause).toEqual(await api('GET', `/rest/sync-errors/by-cause?${viaJson(filters)}`));
    }
    expect((await api('GET', `/rest/sync-errors?${typed({ coreBaseId, status: 'resolved' })}`)).total).toBe(
      0,
    );
    // The forms combine; one filter given both ways is refused rather than one silently winning.
    expect((await remoteIds(api, `side=left&${viaJson({ coreBaseId })}`)).sort()).toEqual([
      'rec100',
      'rec101',
    ]);
    await expect(api('GET', `/rest/sync-errors?side=left&${viaJson({ side: 'right' })}`)).rejects.toThrow(
      /400.*Give side once/,
    );
  });

  it('answer a bad value with a 400 in the envelope that names the parameter', async () => {
    for (const query of ['status=broken', 'coreBaseId=not-a-uuid', 'side=middle', 'tableMappingId=7']) {
      const res = await t.app.inject({ url: `/rest/sync-errors?${query}`, headers: auth });
      expect(res.statusCode, query).toBe(400);
      const name = query.split('=')[0];
      expect(res.json().response.userFacingMessage.join(' '), query).toMatch(
        new RegExp(`querystring\\.${name}`),
      );
    }
  });

  it("keep another user's issues out of reach", async () => {
    expect((await other('GET', `/rest/sync-errors?${typed({ code: 'validation' })}`)).total).toBe(0);
    expect((await other('GET', `/rest/sync-errors/by-cause?${typed({ status: 'open' })}`)).total).toBe(0);
    await expect(other('GET', `/rest/sync-errors?${typed({ coreBaseId })}`)).rejects.toThrow(/404/);
  });
});
