import type { Migration } from 'kysely';
import * as m0001 from './0001-accounts-and-plans';

/** Migrations in order; names are stable once shipped. */
export const migrations: Record<string, Migration> = {
  '0001-accounts-and-plans': m0001,
};
