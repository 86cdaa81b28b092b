import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';

/**
 * Blended tables (spec section 7, /rest/blended-tables): one virtual table that is the union of
 * several source tables of the user's own connections. It is a table of the virtual base "Blended
 * tables" (connection type `blended`), mapped and synced like any other table: reads union the
 * sources, writes go back to the source record's table, creates to the default source.
 */

/** The remote id of the read-only field saying which source a record comes from. */
export const BLENDED_SOURCE_FIELD_ID = 'source';
/** The one base of a `blended` connection. */
export const BLENDED_BASE_REMOTE_ID = 'blended';
export const BLENDED_MAX_SOURCES = 10;

const BlendedFieldType = z.enum([
  'text',
  'rich_text',
  'number',
  'currency',
  'boolean',
  'date',
  'datetime',
  'duration',
  'single_select',
  'multi_select',
  'email',
  'url',
  'phone',
  'attachments',
  'json',
]);

/** A source table: a table of one of the user's connections. */
export const BlendedSourceInput = z.strictObject({
  connectionId: z.string().uuid(),
  baseRemoteId: z.string().min(1).max(500),
  tableRemoteId: z.string().min(1).max(500),
});
export type BlendedSourceInput = z.infer<typeof BlendedSourceInput>;

export const BlendedSource = BlendedSourceInput.extend({
  /** What the `Source` field says for this source's records (unique within the table). */
  name: z.string().trim().min(1).max(100),
});
export type BlendedSource = z.infer<typeof BlendedSource>;

export const BlendedFieldInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  type: BlendedFieldType,
  /** Per source (by position), the source field's remote id this field comes from, or null. */
  sourceFields: z.array(z.string().min(1).max(500).nullable()).min(2).max(BLENDED_MAX_SOURCES),
  /** The field's options (a select's choices), as the first source that has it describes them. */
  options: z.record(z.string(), z.unknown()).default({}),
  readOnly: z.boolean().default(false),
});
export type BlendedFieldInput = z.infer<typeof BlendedFieldInput>;

export const BlendedField = BlendedFieldInput.extend({ id: z.string() });
export type BlendedField = z.infer<typeof BlendedField>;

/** What a blended table is made of (stored as its config). */
export const BlendedTableConfig = z.object({
  sources: z.array(BlendedSource).min(2).max(BLENDED_MAX_SOURCES),
  /** The source (by position) a record created in the blended table lands in. */
  defaultSource: z.number().int().min(0),
  fields: z.array(BlendedField).min(1).max(500),
});
export type BlendedTableConfig = z.infer<typeof BlendedTableConfig>;

export const GenerateBlendedConfigBody = z.strictObject({
  sources: z.array(BlendedSourceInput).min(2).max(BLENDED_MAX_SOURCES),
});

/** A proposed field, with why its source fields were put together. */
export const ProposedBlendedField = BlendedFieldInput.extend({ reasons: z.array(z.string()) });

export const GenerateBlendedConfigResponse = z.object({
  name: z.string(),
  sources: z.array(BlendedSource),
  defaultSource: z.number().int(),
  fields: z.array(ProposedBlendedField),
  /** Each source's fields, for re-pairing in the editor. */
  sourceFields: z.array(z.array(z.object({ remoteId: z.string(), name: z.string(), type: z.string() }))),
});

export const CreateBlendedTableBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  sources: z.array(BlendedSource).min(2).max(BLENDED_MAX_SOURCES),
  defaultSource: z.number().int().min(0).default(0),
  fields: z.array(BlendedFieldInput).min(1).max(500),
});
export type CreateBlendedTableBody = z.infer<typeof CreateBlendedTableBody>;

export const PreviewBlendedTableBody = z.strictObject({
  sources: z.array(BlendedSource).min(2).max(BLENDED_MAX_SOURCES),
  fields: z.array(BlendedFieldInput).min(1).max(500),
  /** Rows read from each source. */
  perSource: z.number().int().min(1).max(50).default(5),
});

export const BlendedPreviewResponse = z.object({
  fields: z.array(z.object({ id: z.string(), name: z.string(), type: z.string() })),
  rows: z.array(
    z.object({
      /** The blended record id: `<source position>:<the source's record id>`. */
      id: z.string(),
      source: z.string(),
      sourceIndex: z.number().int(),
      fields: z.record(z.string(), z.unknown()),
    }),
  ),
});

export const BlendedTable = z.object({
  id: Uuid,
  name: z.string(),
  sources: z.array(BlendedSource),
  defaultSource: z.number().int(),
  fields: z.array(BlendedField),
  /** The user's `blended` connection: attach its base `blended` to a sync side to sync this table. */
  connectionId: z.string(),
  /** Syncs whose table mappings use this table (it cannot be deleted while any does). */
  usedBySyncs: z.number().int(),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type BlendedTable = z.infer<typeof BlendedTable>;
