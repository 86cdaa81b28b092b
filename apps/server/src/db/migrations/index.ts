import type { Migration } from 'kysely';
import * as m0001 from './0001-accounts-and-plans';
import * as m0002 from './0002-sync-runtime';

/** Migrations in order; names are stable once shipped. */
export const migrations: Record<string, Migration> = {
  '0001-accounts-and-plans': m0001,
  '0002-sync-runtime': m0002,
};
