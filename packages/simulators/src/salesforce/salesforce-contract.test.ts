/**
 * Contract test: jsforce (the widely used Salesforce client) against the simulator, through the
 * calls a sync makes. If the client cannot use the simulator, the simulator is wrong, not this
 * test. jsforce errors carry Salesforce's errorCode (as `errorCode` and `name`) but not the HTTP
 * status, so statuses are read from the simulator's request log.
 */
import { Connection, OAuth2 } from 'jsforce';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  DEFAULT_OAUTH_CLIENT,
  type SalesforceSimulator,
  type StartSalesforceSimulatorOptions,
  startSalesforceSimulator,
} from './index.ts';

const VERSION = '62.0';
const started: SalesforceSimulator[] = [];

async function start(
  options: StartSalesforceSimulatorOptions = {},
): Promise<{ sim: SalesforceSimulator; conn: Connection; clock: ManualClock }> {
  const clock = new ManualClock();
  const sim = await startSalesforceSimulator({ idSeed: 3, clock, bulk: { processingMs: 0 }, ...options });
  started.push(sim);
  const conn = new Connection({ instanceUrl: sim.url, accessToken: sim.token, version: VERSION });
  return { sim, conn, clock: (options.clock as ManualClock | undefined) ?? clock };
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

type ApiError = Error & { errorCode: string; data: unknown };

async function failure(p: PromiseLike<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the call to fail');
}

const lastStatus = (sim: SalesforceSimulator) => sim.requestLog.entries.at(-1)?.status;

type Row = Record<string, unknown> & { attributes: { type: string; url: string }; Id: string };

describe('jsforce against the Salesforce simulator', () => {
  it('query pages through nextRecordsUrl with queryMore until done, and autoFetch reads every row', async () => {
    const { sim, conn } = await start({ seed: { contacts: 4500 } });
    const soql = 'SELECT Id, Name, Email, SystemModstamp, Account.Name FROM Contact ORDER BY Id';
    const first = await conn.query<Row>(soql);
    expect(first.totalSize).toBe(4500);
    expect(first.done).toBe(false);
    expect(first.records).toHaveLength(2000);
    // jsforce makes the relative nextRecordsUrl absolute.
    expect(first.nextRecordsUrl).toMatch(
      new RegExp(`^${sim.url}/services/data/v${VERSION}/query/01g\\w+-2000$`),
    );
    const row = first.records[0] as Row;
    expect(row.attributes).toEqual({
      type: 'Contact',
      url: `/services/data/v${VERSION}/sobjects/Contact/${row.Id}`,
    });
    expect(row.SystemModstamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/);
    expect((row.Account as { Name: string }).Name).toEqual(expect.any(String));

    const ids = first.records.map((r) => r.Id);
    let next = first.nextRecordsUrl;
    let pages = 1;
    while (next) {
      const more = await conn.queryMore<Row>(next);
      ids.push(...more.records.map((r) => r.Id));
      next = more.done ? undefined : more.nextRecordsUrl;
      pages++;
    }
    expect(pages).toBe(3);
    expect(new Set(ids).size).toBe(4500);
    expect(ids).toEqual([...ids].sort());

    const all = await conn.query<Row>('SELECT Id FROM Contact').run({ autoFetch: true, maxFetch: 10_000 });
    expect(all.records).toHaveLength(4500);
    expect(sim.requestLog.count({ path: `/services/data/v${VERSION}/query` })).toBe(6);
  });

  it('WHERE on SystemModstamp, IN, LIKE and LIMIT; COUNT(); a malformed query is a MALFORMED_QUERY / INVALID_FIELD error', async () => {
    const { sim, conn, clock } = await start();
    clock.advance(60_000);
    const since = new Date(clock.now()).toISOString();
    clock.advance(60_000);
    const [a, b] = sim.org?.contacts ?? [];
    sim.update('Contact', a as string, { Title: 'Changed' });
    const changed = await conn.query<Row>(
      `SELECT Id, Title FROM Contact WHERE SystemModstamp > ${since} ORDER BY SystemModstamp`,
    );
    expect(changed.records.map((r) => [r.Id, r.Title])).toEqual([[a, 'Changed']]);

    const inList = await conn.query<Row>(`SELECT Id FROM Contact WHERE Id IN ('${a}', '${b}') ORDER BY Id`);
    expect(inList.records.map((r) => r.Id)).toEqual([a, b].sort());
    const like = await conn.query<Row>(
      "SELECT Name FROM Account WHERE Name LIKE 'acme%' AND (Industry = 'Technology' OR Industry = null) LIMIT 5",
    );
    expect(like.records.map((r) => r.Name)).toEqual(['Acme Analytics']);
    const count = await conn.query('SELECT COUNT() FROM Lead');
    expect(count.totalSize).toBe(15);

    const badField = await failure(conn.query('SELECT Id, Nope__c FROM Contact'));
    expect(badField.errorCode).toBe('INVALID_FIELD');
    expect(badField.message).toContain("No such column 'Nope__c' on entity 'Contact'");
    expect(lastStatus(sim)).toBe(400);
    const malformed = await failure(conn.query("SELECT Id FROM Contact WHERE Name = 'a' OR"));
    expect(malformed.errorCode).toBe('MALFORMED_QUERY');
    const mixed = await failure(
      conn.query("SELECT Id FROM Contact WHERE Name = 'a' AND Title = 'b' OR Email = null"),
    );
    expect(mixed.errorCode).toBe('MALFORMED_QUERY');
    const quoted = await failure(
      conn.query("SELECT Id FROM Contact WHERE SystemModstamp > '2026-01-01T00:00:00Z'"),
    );
    expect(quoted.errorCode).toBe('INVALID_FIELD');
    const badType = await failure(conn.query('SELECT Id FROM Nope'));
    expect(badType.errorCode).toBe('INVALID_TYPE');
  });

  it('sobject create, retrieve, update, destroy; the record goes to the recycle bin that queryAll sees', async () => {
    const { sim, conn, clock } = await start();
    const contacts = conn.sobject('Contact');
    const created = await contacts.create({ FirstName: 'Jo', LastName: 'Client', Email: 'jo@example.com' });
    expect(created).toEqual({ id: expect.stringMatching(/^003\w{15}$/), success: true, errors: [] });
    const id = created.id as string;
    expect(lastStatus(sim)).toBe(201);

    const read = (await contacts.retrieve(id)) as Row;
    expect(read).toMatchObject({
      Id: id,
      Name: 'Jo Client',
      Email: 'jo@example.com',
      IsDeleted: false,
      HasOptedOutOfEmail: false,
    });
    expect(read.OwnerId).toBe(sim.state.userId);

    clock.advance(5000);
    const updated = await contacts.update({ Id: id, Title: 'Buyer', Interests__c: 'Security;Analytics' });
    expect(updated).toEqual({ id, success: true, errors: [] });
    expect(lastStatus(sim)).toBe(204);
    const after = (await contacts.retrieve(id, {
      fields: ['Title', 'Interests__c', 'LastModifiedDate', 'SystemModstamp'],
    })) as Row;
    expect(after.Title).toBe('Buyer');
    expect(after.Interests__c).toBe('Security;Analytics');
    expect(Date.parse(String(after.SystemModstamp).replace('+0000', 'Z'))).toBe(clock.now());
    expect(after.LastModifiedDate).toBe(after.SystemModstamp);
    expect(Object.keys(after)).toEqual([
      'attributes',
      'Title',
      'Interests__c',
      'LastModifiedDate',
      'SystemModstamp',
    ]);

    const destroyed = await contacts.destroy(id);
    expect(destroyed).toEqual({ id, success: true, errors: [] });
    const gone = await failure(contacts.retrieve(id));
    expect(gone.errorCode).toBe('ENTITY_IS_DELETED');
    expect(lastStatus(sim)).toBe(404);
    const again = await failure(contacts.destroy(id));
    expect(again.errorCode).toBe('ENTITY_IS_DELETED');

    expect((await conn.query(`SELECT Id FROM Contact WHERE Id = '${id}'`)).totalSize).toBe(0);
    const bin = await conn
      .query<Row>(`SELECT Id, IsDeleted FROM Contact WHERE Id = '${id}'`)
      .scanAll(true)
      .run();
    expect(bin.records).toEqual([expect.objectContaining({ Id: id, IsDeleted: true })]);
  });

  it('triggers change the post-image: what is read back differs from what was written', async () => {
    const { sim, conn } = await start();
    sim.addTrigger('Account', ({ record }) => ({ Name: String(record.Name).toUpperCase(), Rating: 'Hot' }));
    const res = await conn.sobject('Account').create({ Name: 'quiet corp', Rating: 'Cold' });
    const read = (await conn.sobject('Account').retrieve(res.id as string)) as Row;
    expect(read.Name).toBe('QUIET CORP');
    expect(read.Rating).toBe('Hot');
  });

  it('describe reports field types, picklists and flags, for standard objects and Project__c', async () => {
    const { conn } = await start();
    const opp = await conn.sobject('Opportunity').describe();
    expect(opp.name).toBe('Opportunity');
    expect(opp.keyPrefix).toBe('006');
    const byName = new Map(opp.fields.map((f) => [f.name, f]));
    expect(byName.get('Id')).toMatchObject({
      type: 'id',
      createable: false,
      updateable: false,
      nillable: false,
    });
    const stage = byName.get('StageName');
    expect(stage).toMatchObject({
      type: 'picklist',
      restrictedPicklist: true,
      nillable: false,
      createable: true,
    });
    expect(stage?.picklistValues?.map((p) => p.value)).toContain('Closed Won');
    expect(byName.get('AccountId')).toMatchObject({
      type: 'reference',
      referenceTo: ['Account'],
      relationshipName: 'Account',
    });
    expect(byName.get('ExpectedRevenue')).toMatchObject({
      type: 'currency',
      calculated: true,
      updateable: false,
    });
    expect(byName.get('CloseDate')?.type).toBe('date');
    expect(byName.get('Probability')?.type).toBe('percent');
    expect(byName.get('SystemModstamp')?.type).toBe('datetime');

    const project = await conn.sobject('Project__c').describe();
    expect(project.custom).toBe(true);
    const p = new Map(project.fields.map((f) => [f.name, f]));
    expect(p.get('Project_Code__c')).toMatchObject({
      type: 'string',
      unique: true,
      externalId: true,
      custom: true,
    });
    expect(p.get('Tags__c')?.type).toBe('multipicklist');
    expect(p.get('Kickoff_At__c')?.type).toBe('datetime');
    expect(p.get('Active__c')?.type).toBe('boolean');
    expect(p.get('Hours__c')?.type).toBe('double');
    expect(p.get('Contact_Email__c')?.type).toBe('email');
    expect(p.get('Contact_Phone__c')?.type).toBe('phone');
    expect(p.get('Website__c')?.type).toBe('url');
    expect(p.get('Notes__c')?.type).toBe('textarea');
    expect(p.get('Is_Over_Budget__c')).toMatchObject({ calculated: true, updateable: false });

    const global = await conn.describeGlobal();
    expect(global.sobjects.map((s) => s.name)).toEqual([
      'Account',
      'Contact',
      'Lead',
      'Opportunity',
      'Project__c',
    ]);
  });

  it('updated and deleted windows list what changed, truncated to the minute, with latestDateCovered', async () => {
    const { sim, conn, clock } = await start();
    clock.set('2026-01-15T10:00:20Z');
    const [c1, c2, c3] = sim.org?.contacts ?? [];
    sim.update('Contact', c1 as string, { Title: 'Updated' });
    clock.set('2026-01-15T10:01:30Z');
    sim.update('Contact', c2 as string, { Title: 'Later' });
    sim.remove('Contact', c3 as string);
    clock.set('2026-01-15T10:05:00Z');

    const upd = await conn.sobject('Contact').updated('2026-01-15T10:00:40Z', '2026-01-15T10:01:59Z');
    // Seconds are dropped: the window is [10:00, 10:01).
    expect(upd.ids).toEqual([c1]);
    expect(upd.latestDateCovered).toBe('2026-01-15T10:01:00.000+0000');
    const wide = await conn.sobject('Contact').updated('2026-01-15T10:00:00Z', '2026-01-15T11:00:00Z');
    expect(wide.ids).toEqual([c1, c2]);
    expect(wide.latestDateCovered).toBe('2026-01-15T10:05:00.000+0000');

    const del = await conn.sobject('Contact').deleted('2026-01-15T10:00:00Z', '2026-01-15T11:00:00Z');
    expect(del.deletedRecords).toEqual([{ id: c3, deletedDate: '2026-01-15T10:01:30.000+0000' }]);
    expect(del.earliestDateAvailable).toBe('2026-01-15T10:01:00.000+0000');

    const bad = await failure(
      conn.sobject('Contact').updated('2026-01-15T11:00:00Z', '2026-01-15T10:00:00Z'),
    );
    expect(bad.errorCode).toBe('INVALID_REPLICATION_DATE');
    const old = await failure(
      conn.sobject('Contact').updated('2025-11-01T00:00:00Z', '2026-01-15T10:00:00Z'),
    );
    expect(old.errorCode).toBe('INVALID_REPLICATION_DATE');
  });

  it('validation errors surface as the client errors a connector must handle (400, 404)', async () => {
    const { sim, conn } = await start();
    const required = await failure(conn.sobject('Lead').create({ FirstName: 'No' }));
    expect(required.errorCode).toBe('REQUIRED_FIELD_MISSING');
    expect(required.message).toBe('Required fields are missing: [LastName, Company]');
    expect((required.data as { fields: string[] }).fields).toEqual(['LastName', 'Company']);
    expect(lastStatus(sim)).toBe(400);

    const stage = await failure(
      conn.sobject('Opportunity').create({ Name: 'X', StageName: 'Dreaming', CloseDate: '2026-03-01' }),
    );
    expect(stage.errorCode).toBe('INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST');
    expect((stage.data as { fields: string[] }).fields).toEqual(['StageName']);

    const readOnly = await failure(
      conn.sobject('Contact').create({ LastName: 'R', CreatedDate: '2020-01-01T00:00:00Z' }),
    );
    expect(readOnly.errorCode).toBe('INVALID_FIELD_FOR_INSERT_UPDATE');

    const dupe = await failure(
      conn.sobject('Project__c').create({ Name: 'Dup', Project_Code__c: 'prj-001' }),
    );
    expect(dupe.errorCode).toBe('DUPLICATE_VALUE');
    expect(dupe.message).toBe(
      `duplicate value found: Project_Code__c duplicates value on record with id: ${sim.org?.projects[0]}`,
    );

    const email = await failure(conn.sobject('Contact').create({ LastName: 'E', Email: 'not-an-email' }));
    expect(email.errorCode).toBe('INVALID_EMAIL_ADDRESS');

    const missing = await failure(conn.sobject('Contact').retrieve('003000000000000AAA'));
    expect(missing.errorCode).toBe('NOT_FOUND');
    expect(lastStatus(sim)).toBe(404);
    const notUpdated = await failure(
      conn.sobject('Contact').update({ Id: '003000000000000AAA', Title: 'x' }),
    );
    expect(notUpdated.errorCode).toBe('NOT_FOUND');
    const unknownField = await failure(
      conn.sobject('Contact').update({ Id: sim.org?.contacts[0] as string, Nope: 1 }),
    );
    expect(unknownField.errorCode).toBe('INVALID_FIELD');
  });

  it('composite sObject Collections: create many, allOrNone rollback, retrieve many, destroy many', async () => {
    const { sim, conn } = await start();
    const results = await conn
      .sobject('Contact')
      .create([
        { LastName: 'Many 1', Email: 'm1@example.com' },
        { FirstName: 'No last name' },
        { LastName: 'Many 3' },
      ]);
    expect(results).toHaveLength(3);
    expect(results[0]).toEqual({ id: expect.any(String), success: true, errors: [] });
    expect(results[1]).toEqual({
      success: false,
      errors: [
        {
          statusCode: 'REQUIRED_FIELD_MISSING',
          message: 'Required fields are missing: [LastName]',
          fields: ['LastName'],
        },
      ],
    });
    expect(results[2]?.success).toBe(true);

    const before = sim.state.records.size;
    const rolledBack = (await conn.requestPost(`/services/data/v${VERSION}/composite/sobjects`, {
      allOrNone: true,
      records: [
        { attributes: { type: 'Account' }, Name: 'All or none' },
        { attributes: { type: 'Opportunity' }, Name: 'Bad', StageName: 'Nope', CloseDate: '2026-02-01' },
      ],
    })) as { success: boolean; errors: { statusCode: string }[] }[];
    expect(rolledBack.map((r) => [r.success, r.errors[0]?.statusCode])).toEqual([
      [false, 'ALL_OR_NONE_OPERATION_ROLLED_BACK'],
      [false, 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST'],
    ]);
    expect(sim.state.records.size).toBe(before);

    const ids = [results[0]?.id, results[2]?.id] as string[];
    const many = (await conn.requestGet(
      `/services/data/v${VERSION}/composite/sobjects/Contact?ids=${ids.join(',')},003000000000000AAA&fields=Id,LastName`,
    )) as (Row | null)[];
    expect(many.map((r) => r?.LastName ?? null)).toEqual(['Many 1', 'Many 3', null]);
    const viaPost = await conn.sobject('Contact').retrieve(ids, { fields: ['LastName'] });
    expect(viaPost.map((r) => (r as Row | null)?.LastName)).toEqual(['Many 1', 'Many 3']);

    const updated = await conn.sobject('Contact').update(ids.map((Id) => ({ Id, Title: 'Bulk title' })));
    expect(updated.every((r) => r.success)).toBe(true);
    const gone = await conn.sobject('Contact').destroy([...ids, ids[0] as string]);
    expect(gone.map((r) => r.success)).toEqual([true, true, false]);
    expect(gone[2]?.errors).toEqual([
      { statusCode: 'ENTITY_IS_DELETED', message: 'entity is deleted', fields: [] },
    ]);
  });

  it('an invalid or expired session is a 401 INVALID_SESSION_ID', async () => {
    const { sim } = await start();
    const session = sim.issueSession();
    const conn = new Connection({ instanceUrl: sim.url, accessToken: session, version: VERSION });
    expect((await conn.query('SELECT Id FROM Lead LIMIT 1')).records).toHaveLength(1);
    (sim.clock as ManualClock).advance(2 * 3_600_000 + 1);
    const expired = await failure(conn.query('SELECT Id FROM Lead LIMIT 1'));
    expect(expired.errorCode).toBe('INVALID_SESSION_ID');
    expect(expired.message).toBe('Session expired or invalid');
    expect(lastStatus(sim)).toBe(401);
    const bogus = new Connection({ instanceUrl: sim.url, accessToken: 'nope', version: VERSION });
    expect((await failure(bogus.sobject('Contact').describe())).errorCode).toBe('INVALID_SESSION_ID');
  });

  it('the daily API allocation shows in limitInfo and /limits, then refuses with 403 REQUEST_LIMIT_EXCEEDED', async () => {
    const { sim, conn } = await start({ rateLimit: { dailyApiRequests: 4 } });
    await conn.query('SELECT Id FROM Account LIMIT 1');
    expect(conn.limitInfo).toEqual({ apiUsage: { used: 1, limit: 4 } });
    const limits = (await conn.limits()) as unknown as {
      DailyApiRequests: { Max: number; Remaining: number };
    };
    expect(limits.DailyApiRequests).toEqual({ Max: 4, Remaining: 2 });
    await conn.sobject('Account').describe();
    await conn.sobject('Lead').describe();
    const refused = await failure(conn.query('SELECT Id FROM Account LIMIT 1'));
    expect(refused.errorCode).toBe('REQUEST_LIMIT_EXCEEDED');
    expect(refused.message).toBe('TotalRequests Limit exceeded.');
    expect(lastStatus(sim)).toBe(403);
    (sim.clock as ManualClock).advance(24 * 3_600_000 + 1);
    expect((await conn.query('SELECT Id FROM Account LIMIT 1')).records).toHaveLength(1);
  });

  it('bulk2.query returns every row of a query job as records', async () => {
    const { sim, conn } = await start({ seed: { contacts: 120 } });
    const stream = await conn.bulk2.query('SELECT Id, Email, Account.Name, HasOptedOutOfEmail FROM Contact', {
      pollInterval: 10,
      pollTimeout: 5000,
    });
    const rows: Record<string, string>[] = [];
    await new Promise<void>((resolve, reject) => {
      stream.on('record', (r: Record<string, string>) => rows.push(r));
      stream.on('end', () => resolve());
      stream.on('error', reject);
    });
    expect(rows).toHaveLength(120);
    expect(new Set(rows.map((r) => r.Id))).toEqual(new Set(sim.org?.contacts));
    expect(rows[0]).toMatchObject({ Email: expect.stringContaining('@'), HasOptedOutOfEmail: 'false' });
    expect(rows[0]?.['Account.Name']).toEqual(expect.any(String));
  });

  it('bulk2.loadAndWaitForResults inserts rows and reports successful and failed results', async () => {
    const { sim, conn } = await start();
    const res = await conn.bulk2.loadAndWaitForResults({
      object: 'Contact',
      operation: 'insert',
      input: [
        { LastName: 'Bulk One', Email: 'b1@example.com' },
        { LastName: 'Bulk Two', Email: 'broken' },
        { FirstName: 'No last' },
      ],
      pollInterval: 10,
      pollTimeout: 5000,
    });
    expect(res.successfulResults).toHaveLength(1);
    const ok = res.successfulResults[0] as unknown as Record<string, string>;
    expect(ok.sf__Created).toBe('true');
    expect(sim.get('Contact', ok.sf__Id as string)).toMatchObject({
      LastName: 'Bulk One',
      Email: 'b1@example.com',
    });
    expect(res.failedResults.map((f) => String(f.sf__Error).split(':')[0]).sort()).toEqual([
      'INVALID_EMAIL_ADDRESS',
      'REQUIRED_FIELD_MISSING',
    ]);
    expect(res.unprocessedRecords).toHaveLength(0);
  });

  it('an ingest job progresses UploadComplete -> InProgress -> JobComplete on the simulator clock', async () => {
    const { sim, conn, clock } = await start({ bulk: { processingMs: 60_000 } });
    const job = conn.bulk2.createJob({
      object: 'Project__c',
      operation: 'upsert',
      externalIdFieldName: 'Project_Code__c',
    });
    await job.open();
    expect(job.getInfo().state).toBe('Open');
    await job.uploadData('Project_Code__c,Name,Budget__c\nPRJ-001,Renamed,1000\nPRJ-900,Brand new,2500\n');
    await job.close();
    expect(job.getInfo().state).toBe('UploadComplete');
    const states: string[] = [];
    job.on('inProgress', (info: { state: string }) => {
      states.push(info.state);
      clock.advance(20_000);
    });
    await job.poll(5, 5000);
    expect(states).toEqual(['UploadComplete', 'UploadComplete', 'InProgress']);
    const results = await job.getAllResults();
    expect(
      results.successfulResults.map((r) => [
        r.sf__Created,
        (r as unknown as Record<string, string>).Project_Code__c,
      ]),
    ).toEqual([
      ['false', 'PRJ-001'],
      ['true', 'PRJ-900'],
    ]);
    expect(sim.get('Project__c', sim.org?.projects[0] as string)?.Name).toBe('Renamed');
  });

  it('OAuth2 web server flow with PKCE: authorize, token, API calls, and a refresh when the session expires', async () => {
    const { sim } = await start();
    const oauth2 = new OAuth2({
      loginUrl: sim.url,
      clientId: DEFAULT_OAUTH_CLIENT.clientId,
      clientSecret: DEFAULT_OAUTH_CLIENT.clientSecret,
      redirectUri: 'http://localhost:3000/oauth/callback',
      useVerifier: true,
    });
    const authUrl = oauth2.getAuthorizationUrl({ scope: 'api refresh_token', state: 'xyz' });
    expect(authUrl).toContain('code_challenge=');
    const redirect = await fetch(authUrl, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const callback = new URL(redirect.headers.get('location') as string);
    expect(callback.origin + callback.pathname).toBe('http://localhost:3000/oauth/callback');
    expect(callback.searchParams.get('state')).toBe('xyz');

    const conn = new Connection({ oauth2, version: VERSION });
    const user = await conn.authorize(callback.searchParams.get('code') as string);
    expect(user).toEqual({
      id: sim.state.userId,
      organizationId: sim.state.orgId,
      url: `${sim.url}/id/${sim.state.orgId}/${sim.state.userId}`,
    });
    expect(conn.instanceUrl).toBe(sim.url);
    expect(conn.accessToken).toMatch(/^00D\w{12}!/);
    expect(conn.refreshToken).toEqual(expect.any(String));
    const firstToken = conn.accessToken;
    expect((await conn.query('SELECT Id FROM Account')).totalSize).toBe(10);

    const identity = await conn.identity();
    expect(identity.organization_id).toBe(sim.state.orgId);

    (sim.clock as ManualClock).advance(3 * 3_600_000);
    expect((await conn.query('SELECT Id FROM Account')).totalSize).toBe(10);
    expect(conn.accessToken).not.toBe(firstToken);
    expect(sim.requestLog.count({ path: '/services/oauth2/token', method: 'POST', status: 200 })).toBe(2);
    expect(sim.requestLog.count({ path: `/services/data/v${VERSION}/query`, status: 401 })).toBe(1);

    // A code is single-use.
    const reuse = await failure(oauth2.requestToken(callback.searchParams.get('code') as string));
    expect(reuse.name).toBe('invalid_grant');
  });
});
