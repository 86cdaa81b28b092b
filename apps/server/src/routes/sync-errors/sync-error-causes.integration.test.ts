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

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  const user = await signUp(t.app, 'causes@test.test');
  ownerId = user.userId;
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
