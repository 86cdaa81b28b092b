import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, apiAs, databaseUrl, query, setUpPeopleSync, until } from '../../test/pg-pair';
import { settleSync } from '../../test/settle';
import { createTestApp, signUp, type TestApp } from '../../test/test-app';
import { ensureDatabase } from '../db/database';
import { executeGitSyncRun } from './runs';

// A sync of two PostgreSQL `people` tables, its left side kept in a real bare repository made with
// isomorphic-git in a temp dir (a local path: the server runs in local mode). Edits made in git
// with plain isomorphic-git commits come back through run-download.
let t: TestApp;
let api: Api;
let ownAuth: Record<string, string> = {};
let other: Awaited<ReturnType<typeof signUp>>;
let tmp = '';
let repoDir = '';
let syncId = '';
let gitSyncId = '';
const suffix = randomBytes(4).toString('hex');
const urls = { left: '', right: '' };
const FILE = 'data/left/people.csv';

type Run = {
  id: string;
  status: string;
  commitId: string | null;
  error: string | null;
  counts: { file: string; records: number; created: number; updated: number; deleted: number }[];
  conflicts: { recordId: string; field: string; gitValue: unknown; appValue: unknown; outcome: string }[];
  problems: string[];
  message: string | null;
};

async function run(kind: 'upload' | 'download' | 'fetch-schema'): Promise<Run> {
  const started: Run = await api('POST', `/rest/git-sync/${gitSyncId}/run-${kind}`, {});
  let last: Run | undefined;
  await until(async () => {
    const page = await api('GET', `/rest/git-sync/${gitSyncId}/runs?take=5`);
    last = page.items.find((r: Run) => r.id === started.id);
    return last !== undefined && !['PENDING', 'IN_PROGRESS'].includes(last.status);
  }, `the ${kind} run ends`);
  return last as Run;
}

const head = () => git.resolveRef({ fs, gitdir: repoDir, ref: 'refs/heads/main' });
async function fileAtHead(file: string) {
  const { blob } = await git.readBlob({ fs, gitdir: repoDir, oid: await head(), filepath: file });
  return new TextDecoder().decode(blob);
}

/** A plain commit made with isomorphic-git in the bare repository: `file` replaced by `edit(file)`. */
async function commitInGit(file: string, edit: (text: string) => string, message: string) {
  const parent = await head();
  const put = async (treeOid: string | null, parts: string[], blob: string): Promise<string> => {
    const [first, ...rest] = parts as [string, ...string[]];
    const entries = treeOid ? (await git.readTree({ fs, gitdir: repoDir, oid: treeOid })).tree : [];
    const found = entries.find((e) => e.path === first);
    const oid = rest.length === 0 ? blob : await put(found?.oid ?? null, rest, blob);
    const tree = entries.filter((e) => e.path !== first);
    tree.push(
      rest.length === 0
        ? { mode: '100644', path: first, oid, type: 'blob' }
        : { mode: '040000', path: first, oid, type: 'tree' },
    );
    return git.writeTree({ fs, gitdir: repoDir, tree });
  };
  const blob = await git.writeBlob({
    fs,
    gitdir: repoDir,
    blob: new TextEncoder().encode(edit(await fileAtHead(file))),
  });
  const { commit } = await git.readCommit({ fs, gitdir: repoDir, oid: parent });
  const tree = await put(commit.tree, file.split('/'), blob);
  return git.commit({
    fs,
    gitdir: repoDir,
    ref: 'refs/heads/main',
    message,
    tree,
    parent: [parent],
    author: { name: 'A Person', email: 'person@test.test' },
  });
}

const nameOf = async (url: string, email: string) =>
  (await query(url, 'select name from people where email = $1', [email]))[0]?.name;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'lockstep-git-sync-'));
  repoDir = path.join(tmp, 'people.git');
  await git.init({ fs, dir: repoDir, bare: true, defaultBranch: 'main' });
  t = await createTestApp({ LOCKSTEP_ENV: 'local', LOCKSTEP_DATA_DIR: path.join(tmp, 'data') });
  ownAuth = (await signUp(t.app, 'git-sync@test.test')).auth;
  api = apiAs(t.app, ownAuth);
  other = await signUp(t.app, 'git-sync-other@test.test');
  await api('POST', '/rest/users/current/choose-plan', { productType: 'enterprise' });
  for (const side of ['left', 'right'] as const) {
    await ensureDatabase(inject('adminDatabaseUrl'), `git_${side}_${suffix}`);
    urls[side] = databaseUrl(`git_${side}_${suffix}`);
    await query(
      urls[side],
      'create table people (id serial primary key, email text not null unique, name text)',
    );
  }
  await query(
    urls.left,
    `insert into people (email, name) values ('ada@test.test', 'Ada'), ('bob@test.test', 'Bob'), ('cy@test.test', 'Cy, "the third"')`,
  );
  syncId = (await setUpPeopleSync(api, urls, { name: 'Git people', conflictWinnerSide: 'left' })).id;
  await api('PATCH', `/rest/core-bases/${syncId}`, { syncState: 'on' });
  await until(
    async () => Number((await query(urls.right, 'select count(*)::int as n from people'))[0]?.n) === 3,
    'the first sync copies every person',
  );
  await settleSync(t.ctx.db, syncId, () => true, 30_000);
  const created = await api('POST', '/rest/git-sync', {
    coreBaseId: syncId,
    repository: { kind: 'local', path: repoDir },
    branch: 'main',
    folder: 'data',
    sides: ['left'],
    format: 'csv',
  });
  gitSyncId = created.gitSyncId;
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('git sync', () => {
  it('uploads the records as one commit, which a clone reads as CSV in id order', async () => {
    const r = await run('upload');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.commitId).toBe(await head());
    expect(r.counts).toEqual([
      {
        side: 'left',
        table: 'people',
        file: 'left/people.csv',
        records: 3,
        created: 3,
        updated: 0,
        deleted: 0,
      },
    ]);
    const { commit } = await git.readCommit({ fs, gitdir: repoDir, oid: await head() });
    expect(commit.message).toMatch(/^Lockstep upload of Git people: 3 records in 1 table/);
    expect(commit.message).toContain('left/people.csv: 3 records (3 new, 0 changed, 0 deleted)');

    // A clone by git itself sees the files.
    const clone = path.join(tmp, 'clone');
    execFileSync('git', ['clone', '--quiet', '--branch', 'main', repoDir, clone]);
    const csv = await readFile(path.join(clone, FILE), 'utf8');
    expect(csv).toBe(
      '_id,email,id,name\n1,ada@test.test,1,Ada\n2,bob@test.test,2,Bob\n3,cy@test.test,3,"Cy, ""the third"""\n',
    );
    const schema = JSON.parse(await readFile(path.join(clone, 'data/schema.json'), 'utf8'));
    expect(schema.tables).toEqual([
      expect.objectContaining({
        side: 'left',
        app: 'postgresql',
        name: 'people',
        file: 'left/people.csv',
        fields: expect.arrayContaining([expect.objectContaining({ column: 'email', type: 'text' })]),
      }),
    ]);
    expect(schema.mappings[0].fields).toEqual(
      expect.arrayContaining([{ left: 'name', right: 'name', direction: 'both' }]),
    );

    // Nothing changed: a second upload makes no commit.
    const again = await run('upload');
    expect(again.status).toBe('COMPLETED');
    expect(again.commitId).toBe(r.commitId);
    expect(again.message).toMatch(/no new commit/);

    const previews = await api('GET', `/rest/git-sync/${gitSyncId}/fetch-table-previews`);
    expect(previews).toEqual({
      commitId: r.commitId,
      tables: [{ side: 'left', table: 'people', file: FILE, records: 3 }],
    });
  });

  it('applies a cell edited in git to the app, and the sync carries it to the other app', async () => {
    await commitInGit(
      FILE,
      (csv) => csv.replace('2,bob@test.test,2,Bob', '2,bob@test.test,2,Bob from git'),
      'Rename Bob',
    );
    // An upload now would overwrite the edit: refused until it is downloaded.
    const refused = await run('upload');
    expect(refused.status).toBe('FAILED');
    expect(refused.error).toMatch(/changed in git since the last sync/);

    const r = await run('download');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.counts[0]).toMatchObject({ file: 'left/people.csv', updated: 1, created: 0, deleted: 0 });
    expect(r.conflicts).toEqual([]);
    expect(await nameOf(urls.left, 'bob@test.test')).toBe('Bob from git');
    await until(
      async () => (await nameOf(urls.right, 'bob@test.test')) === 'Bob from git',
      'the sync carries it on',
    );
  });

  it('creates a row added in git and commits the id the app gave it', async () => {
    await commitInGit(FILE, (csv) => `${csv},dee@test.test,,Dee\n`, 'Add Dee');
    const r = await run('download');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.counts[0], JSON.stringify(r)).toMatchObject({ created: 1 });
    const [dee] = await query(urls.left, `select id, name from people where email = 'dee@test.test'`);
    expect(dee?.name).toBe('Dee');
    expect(await fileAtHead(FILE)).toContain(`${dee?.id},dee@test.test,${dee?.id},Dee\n`);
    expect(r.commitId).toBe(await head());
    // Downloading again finds nothing new (the row is not created twice).
    const again = await run('download');
    expect(again.status).toBe('COMPLETED');
    expect(
      Number(
        (await query(urls.left, `select count(*)::int as n from people where email = 'dee@test.test'`))[0]?.n,
      ),
    ).toBe(1);
  });

  it('settles a conflicting edit by the table pair’s rule and records it', async () => {
    await settleSync(t.ctx.db, syncId, () => true, 30_000);
    // The pair's winner is the left side, the side this git sync keeps: the app wins.
    await commitInGit(
      FILE,
      (csv) => csv.replace('3,cy@test.test,3,"Cy, ""the third"""', '3,cy@test.test,3,Cy from git'),
      'Rename Cy',
    );
    await query(urls.left, `update people set name = 'Cy from the app' where email = 'cy@test.test'`);
    const r = await run('download');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.conflicts).toEqual([
      expect.objectContaining({
        recordId: '3',
        field: 'name',
        gitValue: 'Cy from git',
        appValue: 'Cy from the app',
        outcome: 'app_won',
      }),
    ]);
    expect(await nameOf(urls.left, 'cy@test.test')).toBe('Cy from the app');

    // The other side as winner: git wins, and its value is written.
    await t.ctx.db
      .updateTable('table_mapping')
      .set({ conflict_winner_side: 'right' })
      .where('core_base_id', '=', syncId)
      .execute();
    const up = await run('upload');
    expect(up.status, up.error ?? '').toBe('COMPLETED');
    await commitInGit(
      FILE,
      (csv) => csv.replace('1,ada@test.test,1,Ada', '1,ada@test.test,1,Ada from git'),
      'Rename Ada',
    );
    await query(urls.left, `update people set name = 'Ada from the app' where email = 'ada@test.test'`);
    const r2 = await run('download');
    expect(r2.conflicts).toEqual([
      expect.objectContaining({
        recordId: '1',
        field: 'name',
        outcome: 'git_won',
        appValue: 'Ada from the app',
      }),
    ]);
    expect(await nameOf(urls.left, 'ada@test.test')).toBe('Ada from git');
    await t.ctx.db
      .updateTable('table_mapping')
      .set({ conflict_winner_side: 'left' })
      .where('core_base_id', '=', syncId)
      .execute();
  });

  it('deletes a record whose row was removed in git, on both apps', async () => {
    const [dee] = await query(urls.left, `select id from people where email = 'dee@test.test'`);
    await until(
      async () => (await nameOf(urls.right, 'dee@test.test')) === 'Dee',
      'Dee reaches the other app',
    );
    await commitInGit(
      FILE,
      (csv) => csv.replace(`${dee?.id},dee@test.test,${dee?.id},Dee\n`, ''),
      'Remove Dee',
    );
    const r = await run('download');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.counts[0]).toMatchObject({ deleted: 1, created: 0 });
    expect(await query(urls.left, `select id from people where email = 'dee@test.test'`)).toEqual([]);
    await until(
      async () =>
        (await query(urls.right, `select id from people where email = 'dee@test.test'`)).length === 0,
      'the sync deletes Dee on the other app',
    );
  });

  it('cancels a run that has not ended, and refuses when none is in progress', async () => {
    const queued = await t.ctx.db
      .insertInto('git_sync_run')
      .values({
        owner_id: (
          await t.ctx.db
            .selectFrom('git_sync')
            .select('owner_id')
            .where('id', '=', gitSyncId)
            .executeTakeFirstOrThrow()
        ).owner_id,
        git_sync_id: gitSyncId,
        kind: 'upload',
        counts: '[]',
        conflicts: '[]',
        problems: '[]',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Something an upload would commit, if the cancelled run ran.
    await query(urls.left, `update people set name = 'Bob, changed meanwhile' where email = 'bob@test.test'`);
    const before = await head();
    const cancelled = await api('POST', `/rest/git-sync/${gitSyncId}/cancel`, {});
    expect(cancelled).toMatchObject({ id: queued.id, status: 'CANCELLED' });
    await executeGitSyncRun(t.ctx, queued.id);
    expect(await head()).toBe(before);
    const after = await t.ctx.db
      .selectFrom('git_sync_run')
      .select('status')
      .where('id', '=', queued.id)
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('CANCELLED');
    await expect(api('POST', `/rest/git-sync/${gitSyncId}/cancel`, {})).rejects.toThrow(/409/);
  });

  it('keeps the table as JSON Lines when asked to, and applies an edit made there', async () => {
    const patched = await api('PATCH', `/rest/git-sync/${gitSyncId}`, { format: 'jsonl' });
    expect(patched).toMatchObject({ format: 'jsonl', lastSyncedCommit: null });
    const up = await run('upload');
    expect(up.status, up.error ?? '').toBe('COMPLETED');
    const file = 'data/left/people.jsonl';
    const lines = (await fileAtHead(file))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ _id: '1', email: 'ada@test.test', id: '1', name: 'Ada from git' });
    await commitInGit(
      file,
      (text) => text.replace('"name":"Ada from git"', '"name":"Ada in JSON Lines"'),
      'Rename Ada again',
    );
    const r = await run('download');
    expect(r.status, r.error ?? '').toBe('COMPLETED');
    expect(r.counts).toEqual([expect.objectContaining({ file: 'left/people.jsonl', updated: 1 })]);
    expect(await nameOf(urls.left, 'ada@test.test')).toBe('Ada in JSON Lines');

    // A file edited out of shape fails the run, naming the file and line; nothing is applied.
    const synced = (await api('GET', `/rest/git-sync/${gitSyncId}`)).lastSyncedCommit;
    await commitInGit(file, (text) => `${text}{"_id": "1", "name": oops}\n`, 'Break the file');
    const broken = await run('download');
    expect(broken.status).toBe('FAILED');
    expect(broken.error).toMatch(/^left\/people\.jsonl, line \d+: not a JSON object\.$/);
    expect((await api('GET', `/rest/git-sync/${gitSyncId}`)).lastSyncedCommit).toBe(synced);
  });

  it('answers another user 404 and bad input 400, in the envelope', async () => {
    for (const [method, url] of [
      ['GET', `/rest/git-sync/${gitSyncId}`],
      ['GET', `/rest/git-sync/${gitSyncId}/runs`],
      ['GET', `/rest/git-sync/${gitSyncId}/fetch-table-previews`],
      ['POST', `/rest/git-sync/${gitSyncId}/run-upload`],
      ['POST', `/rest/git-sync/${gitSyncId}/run-download`],
      ['POST', `/rest/git-sync/${gitSyncId}/cancel`],
      ['PATCH', `/rest/git-sync/${gitSyncId}`],
      ['DELETE', `/rest/git-sync/${gitSyncId}`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: {
          ...other.auth,
          ...(method === 'POST' || method === 'PATCH' ? { 'content-type': 'application/json' } : {}),
        },
        ...(method === 'POST' || method === 'PATCH' ? { payload: {} } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({
        statusCode: 404,
        response: { userFacingMessage: 'Git sync was not found.' },
      });
    }
    expect((await api('GET', '/rest/git-sync')).items).toHaveLength(1);
    const theirs = await t.app.inject({ method: 'GET', url: '/rest/git-sync', headers: other.auth });
    expect(theirs.json().items).toEqual([]);
    const onMine = await t.app.inject({
      method: 'POST',
      url: '/rest/git-sync',
      headers: { ...other.auth, 'content-type': 'application/json' },
      payload: { coreBaseId: syncId, repository: { kind: 'local', path: repoDir } },
    });
    expect(onMine.statusCode).toBe(404);

    for (const payload of [
      { coreBaseId: syncId, repository: { kind: 'local', path: repoDir }, folder: '../outside' },
      { coreBaseId: syncId, repository: { kind: 'https', url: 'http://example.com/r.git' } },
      { coreBaseId: syncId, repository: { kind: 'https', url: 'https://me:secret@example.com/r.git' } },
      { coreBaseId: syncId, repository: { kind: 'local', path: repoDir }, branch: 'bad..branch' },
      { coreBaseId: 'not-a-uuid', repository: { kind: 'local', path: repoDir } },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/rest/git-sync',
        headers: { ...ownAuth, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({
        statusCode: 400,
        path: '/rest/git-sync',
        response: { userFacingMessage: expect.anything() },
      });
    }
    // A second git sync for the same sync: 409.
    await expect(
      api('POST', '/rest/git-sync', { coreBaseId: syncId, repository: { kind: 'local', path: repoDir } }),
    ).rejects.toThrow(/409/);
  });

  it('never returns the token of an HTTPS repository, and keeps it when a patch leaves it out', async () => {
    const patched = await api('PATCH', `/rest/git-sync/${gitSyncId}`, {
      repository: { kind: 'https', url: 'https://git.example.com/people.git', token: 'tok-secret-123' },
    });
    expect(patched.repository).toEqual({
      kind: 'https',
      url: 'https://git.example.com/people.git',
      hasToken: true,
      username: null,
    });
    expect(patched.lastSyncedCommit).toBeNull();
    expect(JSON.stringify(patched)).not.toContain('tok-secret-123');
    const row = await t.ctx.db
      .selectFrom('git_sync')
      .select('secret')
      .where('id', '=', gitSyncId)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain('tok-secret-123');
    const again = await api('PATCH', `/rest/git-sync/${gitSyncId}`, {
      repository: { kind: 'https', url: 'https://git.example.com/people.git' },
      branch: 'other',
    });
    expect(again.repository.hasToken).toBe(true);
    const back = await api('PATCH', `/rest/git-sync/${gitSyncId}`, {
      repository: { kind: 'local', path: repoDir },
      branch: 'main',
    });
    expect(back.repository).toEqual({ kind: 'local', path: repoDir });
    expect((await api('DELETE', `/rest/git-sync/${gitSyncId}`)).deleted).toBe(true);
    await expect(api('GET', `/rest/git-sync/${gitSyncId}`)).rejects.toThrow(/404/);
  });
});
