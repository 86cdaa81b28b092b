import { CreateGitSyncBody, GitSync } from '@lockstep/contract';
import { assertGitRepositoryInput, sealRepository } from '../../git-sync/repository-input';
import { toGitSync } from '../../git-sync/store';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { findCoreBase } from '../../services/core-bases';

export function createGitSync(app: RestApp, ctx: AppContext) {
  app.post(
    '/git-sync',
    {
      schema: {
        tags: ['git-sync'],
        summary:
          "Keep a sync's tables as files in a git repository (HTTPS with a token, or a local path on a local server)",
        body: CreateGitSyncBody,
        response: { 201: GitSync },
      },
    },
    async (request, reply) => {
      const base = await findCoreBase(ctx.db, principalOf(request), request.body.coreBaseId);
      const { repository, branch, folder, sides, format } = request.body;
      await assertGitRepositoryInput(repository, ctx.config);
      const existing = await ctx.db
        .selectFrom('git_sync')
        .select('id')
        .where('core_base_id', '=', base.id)
        .executeTakeFirst();
      if (existing)
        throw new HttpError(
          409,
          'Git sync exists',
          'This sync already has a git sync. Change it instead.',
          'conflict',
        );
      const row = await ctx.db
        .insertInto('git_sync')
        .values({
          owner_id: base.owner_id,
          core_base_id: base.id,
          ...sealRepository(repository, null, ctx.secretBox),
          branch,
          folder,
          sides: JSON.stringify([...new Set(sides)]),
          format,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.status(201).send(toGitSync(row, null, ctx.secretBox));
    },
  );
}
