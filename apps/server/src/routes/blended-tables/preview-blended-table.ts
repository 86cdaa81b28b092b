import { BlendedPreviewResponse, PreviewBlendedTableBody } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { previewRows, resolveConfig } from '../../services/blended-tables/configure';

export function previewBlendedTable(app: RestApp, ctx: AppContext) {
  app.post(
    '/blended-tables/preview',
    {
      schema: {
        tags: ['blended-tables'],
        summary: "The first rows of each source in a blended table's fields, with the source they come from",
        body: PreviewBlendedTableBody,
        response: { 200: BlendedPreviewResponse },
      },
    },
    async (request) => {
      const { sources, fields, perSource } = request.body;
      const resolved = await resolveConfig(ctx, principalOf(request), sources, fields);
      return previewRows(resolved.opened, { sources, fields: resolved.fields }, perSource);
    },
  );
}
