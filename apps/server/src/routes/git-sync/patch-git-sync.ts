import { GitSync, PatchGitSyncBody } from '@lockstep/contract';
import { assertGitRepositoryInput, sealRepository } from '../../git-sync/repository-input';
import { findGitSync, lastRunOf, toGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { GitSyncIdParams } from './params';

export function patchGitSync(app: RestApp, ctx: AppContext) {
  app.patch(
    '/git-sync/:id',
    {
      schema: {
        tags: ['git-sync'],
        summary:
          'Change a git sync; a new repository, branch or folder starts over (the next download needs an upload first)',
        params: GitSyncIdParams,
        body: PatchGitSyncBody,
        response: { 200: GitSync },
      },
    },
    async (request) => {
      const row = await findGitSync(ctx.db, principalOf(request), request.params.id);
      const b = request.body;
      if (b.repository) await assertGitRepositoryInput(b.repository, ctx.config);
      const repo = b.repository ? sealRepository(b.repository, row, ctx.secretBox) : null;
      const moved =
        (repo !== null && (repo.repo_url !== row.repo_url || repo.repo_path !== row.repo_path)) ||
        (b.branch !== undefined && b.branch !== row.branch) ||
        (b.folder !== undefined && b.folder !== row.folder) ||
        (b.format !== undefined && b.format !== row.format);
      const updated = await ctx.db
        .updateTable('git_sync')
        .set({
          ...(repo ?? {}),
          ...(b.branch !== undefined ? { branch: b.branch } : {}),
          ...(b.folder !== undefined ? { folder: b.folder } : {}),
          ...(b.sides !== undefined ? { sides: JSON.stringify([...new Set(b.sides)]) } : {}),
          ...(b.format !== undefined ? { format: b.format } : {}),
          // Another place for the files: what was synced there is not the shadow here.
          ...(moved ? { last_synced_commit: null } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const last = await lastRunOf(ctx.db, [row.id]);
      return toGitSync(updated, last.get(row.id) ?? null, ctx.secretBox);
    },
  );
}
