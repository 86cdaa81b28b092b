import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../src/db/embedded-postgres';

/**
 * One real embedded PostgreSQL for the whole integration run (not one per test). Test files get
 * its admin URL and create their own database, so they never see each other's rows.
 */
let embedded: EmbeddedDatabase | null = null;
let dir = '';

export async function setup(project: TestProject) {
  if (process.env.LOCKSTEP_TEST_DATABASE_URL) {
    project.provide('adminDatabaseUrl', process.env.LOCKSTEP_TEST_DATABASE_URL);
    return;
  }
  dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-test-'));
  // wal_level=logical: the PostgreSQL connector's logical-decoding capture is tested here too.
  embedded = await startEmbeddedPostgres(dir, () => {}, { wal_level: 'logical' });
  project.provide('adminDatabaseUrl', embedded.url('postgres'));
}

export async function teardown() {
  await embedded?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}
