import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitSyncError, openRepository } from './repository';

// The HTTPS path of a git sync against a real smart-HTTP git server: git's own http-backend (as a
// CGI behind a Node HTTPS server with a self-signed certificate), which asks for the token by
// Basic auth as GitHub and GitLab do. The product speaks to it through isomorphic-git only.
let tmp = '';
let server: https.Server;
let base = '';
const TOKEN = 'tok-123';
const seen: string[] = [];
let tlsSetting: string | undefined;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'lockstep-git-https-'));
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-keyout', path.join(tmp, 'key.pem'), '-out', path.join(tmp, 'cert.pem')],
    ],
    { stdio: 'ignore' },
  );
  await git.init({ fs, dir: path.join(tmp, 'remote', 'crm.git'), bare: true, defaultBranch: 'main' });
  server = https.createServer(
    { key: await readFile(path.join(tmp, 'key.pem')), cert: await readFile(path.join(tmp, 'cert.pem')) },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://localhost');
      seen.push(`${req.method} ${url.pathname}`);
      const expected = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
        return;
      }
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: path.join(tmp, 'remote'),
          GIT_HTTP_EXPORT_ALL: '1',
          REMOTE_USER: 'x-access-token',
          REQUEST_METHOD: req.method,
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          ...(req.headers['content-encoding']
            ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
            : {}),
        },
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let started = false;
      cgi.stdout.on('data', (chunk: Buffer) => {
        if (started) return void res.write(chunk);
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        started = true;
        const headers: Record<string, string> = {};
        let status = 200;
        for (const line of head.subarray(0, end).toString().split('\r\n')) {
          const [k, ...v] = line.split(':');
          if (!k) continue;
          if (k.toLowerCase() === 'status') status = Number.parseInt(v.join(':').trim(), 10);
          else headers[k] = v.join(':').trim();
        }
        res.writeHead(status, headers);
        res.write(head.subarray(end + 4));
      });
      cgi.stdout.on('end', () => res.end());
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The self-signed certificate of this test server only.
  tlsSetting = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
}, 60_000);
afterAll(async () => {
  if (tlsSetting === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  else process.env.NODE_TLS_REJECT_UNAUTHORIZED = tlsSetting;
  await new Promise((r) => server?.close(r));
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const open = (token: string, cache: string, allowPrivate = true) =>
  openRepository({ kind: 'https', url: `${base}/crm.git`, token, username: null }, 'main', {
    cacheDir: path.join(tmp, cache),
    allowPrivate,
  });
const bytes = (s: string) => new TextEncoder().encode(s);

describe('a git sync repository over HTTPS', () => {
  it('pushes a first commit to an empty repository, and a fresh clone fetches and reads it', async () => {
    const repo = await open(TOKEN, 'cache-a');
    expect(await repo.head()).toBeNull();
    const commit = await repo.commitFolder(
      null,
      'data',
      new Map([
        ['schema.json', bytes('{}\n')],
        ['left/people.csv', bytes('_id,name\n1,Ada\n')],
      ]),
      'Lockstep upload\n',
    );
    const remote = path.join(tmp, 'remote', 'crm.git');
    expect(await git.resolveRef({ fs, gitdir: remote, ref: 'refs/heads/main' })).toBe(commit);
    expect(seen).toContain('POST /crm.git/git-receive-pack');

    const other = await open(TOKEN, 'cache-b');
    expect(await other.head()).toBe(commit);
    const files = await other.readFolder(commit as string, 'data');
    expect(new TextDecoder().decode(files.get('left/people.csv'))).toBe('_id,name\n1,Ada\n');
    // Nothing new: no commit.
    expect(await other.commitFolder(commit, 'data', files, 'again\n')).toBeNull();
  });

  it('refuses to overwrite a commit pushed meanwhile', async () => {
    const a = await open(TOKEN, 'cache-a');
    const b = await open(TOKEN, 'cache-b');
    const start = await a.head();
    expect(await b.head()).toBe(start);
    await b.commitFolder(
      start,
      'data',
      new Map([['left/people.csv', bytes('_id,name\n1,Bea\n')]]),
      'from b\n',
    );
    await expect(
      a.commitFolder(start, 'data', new Map([['left/people.csv', bytes('_id,name\n1,Cy\n')]]), 'from a\n'),
    ).rejects.toThrow(/moved while this run worked/);
  });

  it('says when the token is refused, and refuses a private host outside local mode', async () => {
    const wrong = await open('wrong', 'cache-c');
    await expect(wrong.head()).rejects.toThrow(GitSyncError);
    await expect(wrong.head()).rejects.toThrow(/refused the token/);
    const guarded = await open(TOKEN, 'cache-d', false);
    await expect(guarded.head()).rejects.toThrow(/this server itself|private/);
  });
});
