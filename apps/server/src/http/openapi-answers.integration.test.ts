import { randomBytes } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';

// The formats the document claims (uuid, date-time, email, ...) hold for what the server really
// answers: a real sync runs once, then the answers of many routes are checked against the served
// document's schemas, formats included.
let t: TestApp;
let api: Api;
let auth: Record<string, string> = {};
let doc: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
let syncId = '';

beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject('/api/docs/json')).json();
  auth = (await signUp(t.app, 'answers@test.test')).auth;
  api = apiAs(t.app, auth);
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `answers_${side}_${suffix}`);
    urls[side] = databaseUrl(`answers_${side}_${suffix}`);
    await query(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  await query(
    urls.left,
    `insert into people (email, name) values ('ada@test.test', 'Ada'), ('bob@test.test', 'Bob')`,
  );
  syncId = (await setUpPeopleSync(api, urls, { name: 'Answers' })).id;
  await api('PATCH', `/rest/core-bases/${syncId}`, { syncState: 'on' });
  await until(
    async () => Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n) === 2,
    'the first sync copies both people',
  );
  await settleSync(t.ctx.db, syncId, () => true, 30_000);
  const owner = await t.ctx.db
    .selectFrom('core_base')
    .select('owner_id')
    .where('id', '=', syncId)
    .executeTakeFirstOrThrow();
  await t.ctx.db
    .insertInto('sync_error')
    .values({
      owner_id: owner.owner_id,
      core_base_id: syncId,
      side: 'right',
      remote_id: '1',
      code: 'validation',
      message: 'A person needs a name',
      user_facing_message: 'A person needs a name',
      details: JSON.stringify({}),
    })
    .execute();
}, 180_000);
afterAll(async () => t?.close());

/** The document's path template a concrete URL answers to (`/rest/core-bases/{id}` for `/rest/core-bases/3f1c…`). */
function templateOf(url: string): string {
  const path = url.split('?')[0] ?? url;
  const match = Object.keys(doc.paths).find((template) =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
  if (!match) throw new Error(`no path of the document answers ${path}`);
  return match;
}

describe('answers match the document, formats included', () => {
  it('for the GET routes of a user with a running sync', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: 'doc' });
    await api('POST', '/rest/developer/tokens', { name: 'ci', scopes: ['read'] });
    await api('POST', '/rest/developer/webhooks', {
      url: 'https://example.com/hooks',
      events: ['sync.run.finished'],
    });
    const webhooks = await api('GET', '/rest/developer/webhooks');
    expect((await api('GET', '/rest/developer/tokens')).items).toHaveLength(1);
    expect(webhooks.items).toHaveLength(1);
    const logs = await api('GET', `/rest/sync-logs?coreBaseId=${syncId}`);
    const errors = await api('GET', `/rest/sync-errors?coreBaseId=${syncId}`);
    const full = await api('GET', `/rest/core-bases/${syncId}?detailLevel=fullBaseSchema`);
    const externalBaseId = full.leftExternalBase.id;
    const connectionId = full.leftExternalBase.externalConnectionId;
    expect(logs.total).toBeGreaterThan(0);
    expect(errors.total).toBe(1);
    const checked = [
      '/rest/users/current',
      '/rest/users/limit-data',
      '/rest/plans',
      '/rest/core-bases',
      `/rest/core-bases?name=answers&syncState=on`,
      `/rest/core-bases/${syncId}?detailLevel=fullBaseSchema`,
      `/rest/core-bases/${syncId}`,
      `/rest/core-bases/${syncId}/sync-status`,
      `/rest/core-bases/sync-status/batch?coreBaseIds=${syncId}`,
      `/rest/core-bases/${syncId}/sync-disabled-records`,
      `/rest/core-bases/${syncId}/activity`,
      `/rest/core-bases/${syncId}/delete-approvals`,
      `/rest/core-bases/${syncId}/held-conflicts`,
      `/rest/core-bases/${syncId}/sync-log-exports`,
      '/rest/external-connections',
      `/rest/external-connections/${connectionId}`,
      `/rest/external-bases?coreBaseId=${syncId}`,
      `/rest/external-bases/${externalBaseId}`,
      `/rest/sync-logs?coreBaseId=${syncId}`,
      `/rest/sync-logs/${logs.items[0].id}`,
      `/rest/sync-errors?coreBaseId=${syncId}`,
      `/rest/sync-errors/by-cause?coreBaseId=${syncId}`,
      `/rest/sync-errors/${errors.items[0].id}`,
      `/rest/trace-log/${syncId}`,
      '/rest/developer/tokens',
      '/rest/developer/webhooks',
      `/rest/developer/webhooks/${webhooks.items[0].id}/deliveries`,
      '/rest/git-sync',
      '/rest/api-import',
      '/rest/blended-tables',
    ];
    const problems: string[] = [];
    for (const url of checked) {
      const res = await t.app.inject({ url, headers: auth });
      if (res.statusCode !== 200) {
        problems.push(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        continue;
      }
      const pointer = `/paths/${templateOf(url).replaceAll('/', '~1')}/get/responses/200/content/application~1json/schema`;
      const validate = ajv.compile({ $ref: `doc#${pointer}` });
      if (!validate(res.json())) problems.push(`${url}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
