import { GenerateBlendedConfigBody, GenerateBlendedConfigResponse } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { generateConfig } from '../../services/blended-tables/configure';

export function generateBlendedConfig(app: RestApp, ctx: AppContext) {
  app.post(
    '/blended-tables/generate-config',
    {
      schema: {
        tags: ['blended-tables'],
        summary:
          "Propose a blended table's fields from the chosen source tables (aligned by name, type and sample values)",
        body: GenerateBlendedConfigBody,
        response: { 200: GenerateBlendedConfigResponse },
      },
    },
    async (request) => generateConfig(ctx, principalOf(request), request.body.sources),
  );
}
