import type { Migration } from 'kysely';
import * as m0001 from './0001-accounts-and-plans';
import * as m0002 from './0002-sync-runtime';
import * as m0003 from './0003-rate-limits';
import * as m0004 from './0004-first-sync-staging';
import * as m0005 from './0005-pending-relations';
import * as m0006 from './0006-lean-bookkeeping-keys';
import * as m0007 from './0007-run-claims';
import * as m0008 from './0008-set-based-pipeline';
import * as m0009 from './0009-history-retention';
import * as m0010 from './0010-auth-rate-limits';
import * as m0012 from './0012-option-pairs';
import * as m0013 from './0013-preview-changes';
import * as m0014 from './0014-summarised-creates';
import * as m0015 from './0015-json-bulk-columns';
import * as m0016 from './0016-first-sync-from-preview';
import * as m0017 from './0017-notion-webhook-events';
import * as m0018 from './0018-lean-link-indexes';
import * as m0019 from './0019-pause-all';
import * as m0020 from './0020-setup-origin';
import * as m0021 from './0021-app-webhook-events';
import * as m0022 from './0022-stripe-billing';
import * as m0023 from './0023-git-sync';
import * as m0024 from './0024-api-import';
import * as m0025 from './0025-preview-requested-by';
import * as m0026 from './0026-dry-runs';
import * as m0027 from './0027-developer-api';
import * as m0028 from './0028-undo-runs';
import * as m0029 from './0029-blended-tables';
import * as m0030 from './0030-first-sync-sent';
import * as m0031 from './0031-worker-process';
import * as m0032 from './0032-json-write-ahead';

/**
 * Migrations, run in the order of their names (Kysely sorts them); names are stable once shipped.
 * A number may be taken before a lower one lands (0009 before 0008): the migrator allows that
 * (allowUnorderedMigrations in database.ts) and runs the lower one when it arrives.
 */
export const migrations: Record<string, Migration> = {
  '0001-accounts-and-plans': m0001,
  '0002-sync-runtime': m0002,
  '0003-rate-limits': m0003,
  '0004-first-sync-staging': m0004,
  '0005-pending-relations': m0005,
  '0006-lean-bookkeeping-keys': m0006,
  '0007-run-claims': m0007,
  '0008-set-based-pipeline': m0008,
  '0009-history-retention': m0009,
  '0010-auth-rate-limits': m0010,
  '0012-option-pairs': m0012,
  '0013-preview-changes': m0013,
  '0014-summarised-creates': m0014,
  '0015-json-bulk-columns': m0015,
  '0016-first-sync-from-preview': m0016,
  '0017-notion-webhook-events': m0017,
  '0018-lean-link-indexes': m0018,
  '0019-pause-all': m0019,
  '0020-setup-origin': m0020,
  '0021-app-webhook-events': m0021,
  '0022-stripe-billing': m0022,
  '0023-git-sync': m0023,
  '0024-api-import': m0024,
  '0025-preview-requested-by': m0025,
  '0026-dry-runs': m0026,
  '0027-developer-api': m0027,
  '0028-undo-runs': m0028,
  '0029-blended-tables': m0029,
  '0030-first-sync-sent': m0030,
  '0031-worker-process': m0031,
  '0032-json-write-ahead': m0032,
};
