import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * A database of its own in the run's embedded PostgreSQL (see apps/server/test/global-setup.ts),
 * named `<prefix>_<random>`, so a test file never sees another's rows. Answers its URL.
 */
export async function createTestDatabase(prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}
