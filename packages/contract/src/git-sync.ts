import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';
import { JobStatus } from './runs';
import { Paged } from './users';

/**
 * Git sync (issue 22): a sync's tables kept as files in a git repository. The repository is an
 * HTTPS URL with an optional token (sealed on the server, never returned) or, on a local server
 * only, a path to a repository on that machine.
 */
const segment = /^[^/\\\0]+$/;
export const GitFolder = z
  .string()
  .trim()
  .min(1, 'give a folder for the files')
  .max(200)
  .refine(
    (f) => f.split('/').every((s) => segment.test(s) && s !== '.' && s !== '..' && s !== '.git'),
    'must be a relative folder such as "lockstep" or "data/crm" (no "..", no leading "/")',
  );
// A branch name git accepts (the common rules of git check-ref-format).
export const GitBranch = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(
    (b) =>
      !/[\s~^:?*[\\\0]|\.\.|@\{|\/\/|^\/|\/$|\.$|\.lock$|^-/.test(b) &&
      b.split('/').every((s) => s.length > 0 && !s.startsWith('.')),
    'is not a valid branch name',
  );
export const GitRepositoryInput = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('https'),
    url: z
      .string()
      .trim()
      .max(2000)
      .url('must be an HTTPS URL')
      .refine((u) => u.startsWith('https://'), 'must be an HTTPS URL (https://…)')
      .refine((u) => !new URL(u).username && !new URL(u).password, 'give the token apart, not in the URL'),
    /** A personal access token; kept sealed. Omitted on a patch: the stored one stays. */
    token: z.string().min(1).max(4000).optional(),
    /** The user name sent with the token (GitHub: any; GitLab: oauth2). Default x-access-token. */
    username: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({
    kind: z.literal('local'),
    /** An absolute path to a repository on the server's machine (local mode only). */
    path: z.string().trim().min(1).max(1000),
  }),
]);
export type GitRepositoryInput = z.infer<typeof GitRepositoryInput>;

export const GitSide = z.enum(['left', 'right']);
export const GitFormat = z.enum(['csv', 'jsonl']);

export const CreateGitSyncBody = z.strictObject({
  coreBaseId: z.string().uuid('must be a sync id (a UUID)'),
  repository: GitRepositoryInput,
  branch: GitBranch.default('main'),
  folder: GitFolder.default('lockstep'),
  /** The sides whose tables are written; both by default. */
  sides: z.array(GitSide).min(1).max(2).default(['left', 'right']),
  format: GitFormat.default('csv'),
});
export type CreateGitSyncBody = z.input<typeof CreateGitSyncBody>;

export const PatchGitSyncBody = z.strictObject({
  repository: GitRepositoryInput.optional(),
  branch: GitBranch.optional(),
  folder: GitFolder.optional(),
  sides: z.array(GitSide).min(1).max(2).optional(),
  format: GitFormat.optional(),
});
export type PatchGitSyncBody = z.infer<typeof PatchGitSyncBody>;

export const GitRunKind = z.enum(['upload', 'download', 'fetch_schema']);

export const GitTableCount = z.object({
  side: GitSide,
  table: z.string(),
  file: z.string(),
  records: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  deleted: z.number().int(),
});
export type GitTableCount = z.infer<typeof GitTableCount>;

export const GitConflict = z.object({
  side: GitSide,
  table: z.string(),
  recordId: z.string(),
  field: z.string(),
  gitValue: z.unknown(),
  appValue: z.unknown(),
  /** What happened: git's value or the app's kept by the table pair's rule, or held for review (nothing written). */
  outcome: z.enum(['git_won', 'app_won', 'held']),
});
export type GitConflict = z.infer<typeof GitConflict>;

export const GitSyncRun = z.object({
  id: Uuid,
  gitSyncId: Uuid,
  kind: GitRunKind,
  status: JobStatus,
  done: z.number().int(),
  total: z.number().int().nullable(),
  message: z.string().nullable(),
  /** The branch head the run started from. */
  baseCommit: z.string().nullable(),
  /** The commit the run wrote (upload, fetch_schema) or applied (download). */
  commitId: z.string().nullable(),
  counts: z.array(GitTableCount),
  conflicts: z.array(GitConflict),
  /** What could not be applied (a value of the wrong type, a refused write, a delete held back). */
  problems: z.array(z.string()),
  error: z.string().nullable(),
  createdAt: IsoTimestamp,
  startedAt: IsoTimestamp.nullable(),
  finishedAt: IsoTimestamp.nullable(),
});
export type GitSyncRun = z.infer<typeof GitSyncRun>;

export const GitSync = z.object({
  gitSyncId: Uuid,
  coreBaseId: Uuid,
  repository: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('https'),
      url: z.string(),
      hasToken: z.boolean(),
      username: z.string().nullable(),
    }),
    z.object({ kind: z.literal('local'), path: z.string() }),
  ]),
  branch: z.string(),
  folder: z.string(),
  sides: z.array(GitSide),
  format: GitFormat,
  lastSyncedCommit: z.string().nullable(),
  /** The newest run, if any. */
  lastRun: GitSyncRun.nullable(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type GitSync = z.infer<typeof GitSync>;

export const GitSyncList = z.object({ items: z.array(GitSync) });
export const GitSyncRuns = Paged(GitSyncRun);

export const GitTablePreview = z.object({
  side: GitSide,
  table: z.string(),
  file: z.string(),
  records: z.number().int(),
});
export const GitTablePreviews = z.object({
  /** The branch head read; null when the branch has no commit yet. */
  commitId: z.string().nullable(),
  tables: z.array(GitTablePreview),
});
export type GitTablePreviews = z.infer<typeof GitTablePreviews>;
