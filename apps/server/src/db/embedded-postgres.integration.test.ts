import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from './embedded-postgres';

const fixture = path.resolve(import.meta.dirname, '../../test/fixtures/hold-embedded-postgres.ts');

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('takes over from a postmaster left running by a killed process, keeping the data', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-stale-'));
    dirs.push(dir);
    // One node process (tsx as a loader, not its wrapper), so SIGKILL really kills the owner.
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const firstUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const m = /READY (\S+)/.exec(chunk.toString());
        if (m?.[1]) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
    });
    await query(firstUrl, "create table kept (v text); insert into kept values ('still here')");
    // While its owner lives, a second start refuses instead of stopping a database in use.
    await expect(startEmbeddedPostgres(dir, () => {})).rejects.toThrow(
      /Another Lockstep process is already running/,
    );
    // Kill the owner without letting it stop PostgreSQL: its postmaster stays alive.
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const messages: string[] = [];
    const db = await startEmbeddedPostgres(dir, (line) => messages.push(line));
    try {
      expect(messages.join('\n')).toMatch(/left running by an earlier Lockstep process/);
      expect(await query(db.url(), 'select v from kept')).toEqual([{ v: 'still here' }]);
    } finally {
      await db.stop();
    }
  });

  it('keeps its port across restarts, and moves (remembering the new one) only when it is taken', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-port-'));
    dirs.push(dir);
    const portOf = (url: string) => new URL(url).port;
    const first = await startEmbeddedPostgres(dir, () => {});
    const firstPort = portOf(first.url());
    await first.stop();
    const second = await startEmbeddedPostgres(dir, () => {});
    expect(portOf(second.url())).toBe(firstPort);
    await second.stop();

    // Something else took the port meanwhile.
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(Number(firstPort), '127.0.0.1', resolve));
    let movedPort: string;
    try {
      const moved = await startEmbeddedPostgres(dir, () => {});
      movedPort = portOf(moved.url());
      expect(movedPort).not.toBe(firstPort);
      expect(await query(moved.url(), 'select 1 as ok')).toEqual([{ ok: 1 }]);
      await moved.stop();
    } finally {
      await new Promise((r) => squatter.close(r));
    }
    const after = await startEmbeddedPostgres(dir, () => {});
    expect(portOf(after.url())).toBe(movedPort);
    await after.stop();
  });
});
