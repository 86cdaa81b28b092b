import { ConnectorError } from '@lockstep/connectors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs } from '../../test/pg-pair';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { raiseOutageIssue, resolveOutageIssues } from '../sync/outage-issues';
import { syncStatuses } from './core-bases';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
});
afterAll(async () => t.close());

describe('the status of a sync that cannot reach an app', () => {
  it('names the app while its outage issue is open, and is back to its label once resolved', async () => {
    const api = apiAs(t.app, (await signUp(t.app, 'outage@test.test')).auth);
    await api('POST', '/rest/users/current/choose-plan', { productType: 'pro' });
    const core = await api('POST', '/rest/core-bases', { name: 'Outage' });
    const row = await t.ctx.db
      .selectFrom('core_base')
      .selectAll()
      .where('id', '=', core.id)
      .executeTakeFirstOrThrow();
    expect((await syncStatuses(t.ctx.db, [row]))[0]?.unreachable).toBeNull();

    await raiseOutageIssue(
      t.ctx.db,
      core.id,
      new ConnectorError('transient', 'ECONNREFUSED', 'could not be reached'),
    );
    expect((await syncStatuses(t.ctx.db, [row]))[0]?.unreachable).toBe('an app');

    await resolveOutageIssues(t.ctx.db, core.id);
    expect((await syncStatuses(t.ctx.db, [row]))[0]?.unreachable).toBeNull();
  });
});
