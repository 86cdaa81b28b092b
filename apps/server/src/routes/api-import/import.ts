import { type ApiFetchConfig, ApiImportBody, ApiImportStarted, MASKED_SECRET } from '@lockstep/contract';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { HttpError } from '../../http/http-error';
import { queueApiImportRun } from '../../jobs/api-import';
import { describeApiImport, splitSecrets } from '../../services/api-import/store';
import { proposeMapping, targetTable } from '../../services/api-import/target';
import { findConnection } from '../../services/external-connections';

const bad = (message: string) => new HttpError(400, message, message, 'validation');

/** A stored secret's mask sent back as if it were the secret: the real value is needed here. */
function assertNoMasks(config: ApiFetchConfig) {
  const auth = config.auth;
  const masked =
    Object.values(config.headers).includes(MASKED_SECRET) ||
    (auth.type === 'bearer' && auth.token === MASKED_SECRET) ||
    (auth.type === 'basic' && auth.password === MASKED_SECRET) ||
    (auth.type === 'api_key' && auth.value === MASKED_SECRET);
  if (masked) throw bad('A secret is masked (••••••••): give its value.');
}

/**
 * Spec section 7, API import: saves an import of the API's records into a table of one of the
 * user's connections (the user's field mapping, else automap's proposal), and runs it now and/or on
 * its schedule. Records are upserted by the id field: matched on the target field it is mapped to.
 */
export function importApi(app: RestApp, ctx: AppContext) {
  app.post(
    '/api-import/import',
    {
      schema: {
        tags: ['api-import'],
        summary: 'Save an import into a table of a connected app and run it (now and/or on a schedule)',
        body: ApiImportBody,
        response: { 201: ApiImportStarted },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const connection = await findConnection(ctx.db, principal, body.target.connectionId);
      const { config } = body;
      assertNoMasks(config);
      if (!config.idField)
        throw bad('Choose the id field: records are matched on it when they are imported again.');
      const table = await targetTable(ctx, connection, body.target.baseRemoteId, body.target.tableRemoteId);
      const sourceNames = new Set(config.fields.map((f) => f.name));
      sourceNames.add(config.idField);
      const mapping =
        body.mapping ??
        proposeMapping(config.fields, config.idField, table).mapping.map(
          ({ sourceField, targetFieldId }) => ({
            sourceField,
            targetFieldId,
          }),
        );
      const targets = new Map(table.fields.map((f) => [f.remoteId, f]));
      const seen = new Set<string>();
      for (const m of mapping) {
        const target = targets.get(m.targetFieldId);
        if (!target) throw bad(`The field "${m.targetFieldId}" is not in the table "${table.name}".`);
        if (target.readOnly) throw bad(`The field "${target.name}" is read-only in ${table.name}.`);
        if (!sourceNames.has(m.sourceField))
          throw bad(`"${m.sourceField}" is not a field of the API's records.`);
        if (seen.has(m.targetFieldId)) throw bad(`Two fields are mapped to "${target.name}": map one.`);
        seen.add(m.targetFieldId);
      }
      const idPair = mapping.find((m) => m.sourceField === config.idField);
      if (!idPair)
        throw bad(
          `Map the id field "${config.idField}" to a field of ${table.name}: existing records are matched on it.`,
        );
      const { visible, secrets } = splitSecrets(config);
      const row = await ctx.db
        .insertInto('api_import')
        .values({
          owner_id: connection.owner_id,
          name: body.name,
          config: JSON.stringify(visible),
          secrets: ctx.secretBox.seal(secrets),
          external_connection_id: connection.id,
          base_remote_id: body.target.baseRemoteId,
          table_remote_id: table.remoteId,
          mapping: JSON.stringify(mapping),
          match_target_field_id: idPair.targetFieldId,
          schedule: body.schedule,
          max_pages: body.maxPages,
          max_records: body.maxRecords,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const trackingId = body.runNow ? await queueApiImportRun(ctx.db, ctx.boss, row) : null;
      const saved = await ctx.db
        .selectFrom('api_import')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      return reply.status(201).send({ apiImport: await describeApiImport(ctx.db, saved), trackingId });
    },
  );
}
