import { z } from 'zod';
import { Side, SyncDirection } from './core-bases';
import { Uuid } from './formats';

/**
 * Mapping proposals (spec section 7: POST /rest/ai-table-mapper/{coreBaseId}/automap and
 * POST /rest/ai-field-mapper/{coreBaseId}/automap). Proposals only: the client applies the ones
 * the user keeps with PATCH /rest/core-bases/{id} (mappings.tableMappings).
 */

export const AutomapParams = z.object({ coreBaseId: z.string().uuid('must be a sync id (a UUID)') });

/** How the proposals were made: rules (names, types, sample values). An LLM source may come later. */
export const AutomapSource = z.enum(['rules']);

const Score = z.number().min(0).max(1);
export const NameMatchKind = z.enum(['exact', 'synonym', 'similar', 'none']);

/** Whether sample rows of a table were read to compare values. */
export const AutomapSampleInfo = z.object({
  side: Side,
  tableId: z.string(),
  status: z.enum(['used', 'not_requested', 'unavailable', 'failed']),
  rows: z.number().int(),
  message: z.string().nullable(),
});
export type AutomapSampleInfo = z.infer<typeof AutomapSampleInfo>;

const Options = {
  /** Read up to 50 rows per table through the connector to compare values (skipped if unreachable). */
  useSamples: z.boolean().default(true),
  minScore: Score.optional(),
};

/** Body of the table mapper; may be empty or absent: proposals for the sync's two connected apps. */
export const AutomapTablesBody = z.strictObject({ ...Options }).nullish();
export type AutomapTablesBody = z.infer<typeof AutomapTablesBody>;

/** The pair to match existing records on during the first sync: matchOnFieldId is leftColumnId. */
export const MatchFieldProposal = z.object({
  leftColumnId: Uuid,
  rightColumnId: Uuid,
  /** A second pair matched together with the first when the first alone repeats (first + last name). */
  secondaryLeftColumnId: Uuid.nullable(),
  secondaryRightColumnId: Uuid.nullable(),
  score: Score,
  /** e.g. "15 of 15 organisation names also exist in companies; unique on both sides" */
  reason: z.string(),
  /** The field names and the reason. */
  explanation: z.string(),
});
export type MatchFieldProposal = z.infer<typeof MatchFieldProposal>;

export const TableMappingProposal = z.object({
  leftTableId: Uuid,
  rightTableId: Uuid,
  leftTableName: z.string(),
  rightTableName: z.string(),
  score: Score,
  /** e.g. "synonyms: contacts ~ subscribers (both people); 3 of 5 fields match" */
  explanation: z.string(),
  reasons: z.array(z.string()),
  nameMatch: NameMatchKind,
  fieldsMatched: z.number().int(),
  fieldsCompared: z.number().int(),
  /** The field (and second field) to match existing records on in the first sync, or null. */
  matchField: MatchFieldProposal.nullable(),
  /** The sync's table mapping of exactly this pair, when there is one already. */
  existingTableMappingId: Uuid.nullable(),
});
export type TableMappingProposal = z.infer<typeof TableMappingProposal>;

export const UnmatchedTable = z.object({
  tableId: z.string(),
  name: z.string(),
  reason: z.string(),
});

export const AutomapTablesResponse = z.object({
  coreBaseId: Uuid,
  source: AutomapSource,
  leftExternalBaseId: Uuid,
  rightExternalBaseId: Uuid,
  proposals: z.array(TableMappingProposal),
  unmatchedLeft: z.array(UnmatchedTable),
  unmatchedRight: z.array(UnmatchedTable),
  samples: z.array(AutomapSampleInfo),
});
export type AutomapTablesResponse = z.infer<typeof AutomapTablesResponse>;

/**
 * Body of the field mapper: an existing table mapping, or a left and a right table of the sync.
 * allowUnsupported also proposes pairs the compatibility matrix refuses (flagged supported: false).
 */
export const AutomapFieldsBody = z
  .strictObject({
    tableMappingId: z.string().uuid().optional(),
    leftTableId: z.string().uuid().optional(),
    rightTableId: z.string().uuid().optional(),
    allowUnsupported: z.boolean().default(false),
    /**
     * Table pairs about to be mapped with this one (an automap of the whole sync): linked-record
     * fields that link to them are proposed too, as they are for pairs already mapped.
     */
    plannedTablePairs: z
      .array(z.strictObject({ leftTableId: z.string().uuid(), rightTableId: z.string().uuid() }))
      .max(500)
      .default([]),
    ...Options,
  })
  .refine(
    (b) =>
      b.tableMappingId !== undefined
        ? b.leftTableId === undefined && b.rightTableId === undefined
        : b.leftTableId !== undefined && b.rightTableId !== undefined,
    { message: 'Give a tableMappingId, or a leftTableId and a rightTableId.' },
  );
export type AutomapFieldsBody = z.infer<typeof AutomapFieldsBody>;

export const FieldMappingProposal = z.object({
  leftColumnId: Uuid,
  rightColumnId: Uuid,
  leftColumnName: z.string(),
  rightColumnName: z.string(),
  score: Score,
  /** e.g. "synonyms: email ~ email_address (both email); same type (email); 12 of 40 sample values in common" */
  explanation: z.string(),
  reasons: z.array(z.string()),
  nameMatch: NameMatchKind,
  /** Jaccard of the distinct normalised sample values; null when no samples were compared. */
  sampleOverlap: Score.nullable(),
  /** False only with allowUnsupported: the compatibility matrix refuses the pair. */
  supported: z.boolean(),
  /** The matrix's note (one-way types, a read-only side) or its refusal. */
  compatibilityNote: z.string().nullable(),
  /** Suggested direction: a read-only column only sends; writable on both sides syncs both ways. */
  syncDirection: SyncDirection,
  /** The table mapping's column mapping of exactly this pair, when there is one already. */
  existingColumnMappingId: Uuid.nullable(),
  /** A select on either side: options paired by name, then synonyms ("Won" ~ "Customer"). */
  optionPairs: z
    .array(z.object({ left: z.string(), right: z.string() }))
    .nullable()
    .optional(),
  /** Options (or sampled values) with no partner: values the user must pair before they can sync. */
  unpairedOptions: z
    .object({ left: z.array(z.string()), right: z.array(z.string()) })
    .nullable()
    .optional(),
});
export type FieldMappingProposal = z.infer<typeof FieldMappingProposal>;

export const UnmatchedColumn = z.object({
  columnId: z.string(),
  name: z.string(),
  reason: z.string(),
});

export const AutomapFieldsResponse = z.object({
  coreBaseId: Uuid,
  source: AutomapSource,
  tableMappingId: Uuid.nullable(),
  leftTableId: Uuid,
  rightTableId: Uuid,
  leftTableName: z.string(),
  rightTableName: z.string(),
  proposals: z.array(FieldMappingProposal),
  matchField: MatchFieldProposal.nullable(),
  /** matchField's left column: the table mapping's matchOnFieldId to save, or null. */
  matchOnFieldId: Uuid.nullable(),
  /** matchField's second left column: the table mapping's matchOnSecondaryFieldId to save, or null. */
  matchOnSecondaryFieldId: Uuid.nullable(),
  /** Why matchField was proposed, for a person; null without one. */
  matchReason: z.string().nullable(),
  unmatchedLeft: z.array(UnmatchedColumn),
  unmatchedRight: z.array(UnmatchedColumn),
  samples: z.array(AutomapSampleInfo),
});
export type AutomapFieldsResponse = z.infer<typeof AutomapFieldsResponse>;

// ---------------------------------------------------------------------------------------------
// Schema generation (spec section 7: POST /rest/generate-schema/{externalBaseId}/create-tables and
// /{destExternalBaseId}/create-fields). The other app's tables and fields are created in this app,
// typed from their canonical types; the client then maps them (the field mapper pairs them by name).

export const GenerateSchemaParams = z.object({
  externalBaseId: z.string().uuid('must be an external base id (a UUID)'),
});

/** Tables of the sync's other app to create in this app, with their fields (record ids left out). */
export const CreateTablesBody = z.strictObject({
  sourceTableIds: z.array(z.string().uuid()).min(1).max(50),
});
export type CreateTablesBody = z.infer<typeof CreateTablesBody>;

/** Fields of the sync's other app to add to one table of this app. */
export const CreateFieldsBody = z.strictObject({
  destTableId: z.string().uuid(),
  sourceColumnIds: z.array(z.string().uuid()).min(1).max(200),
});
export type CreateFieldsBody = z.infer<typeof CreateFieldsBody>;

export const CreatedColumn = z.object({
  sourceColumnId: z.string(),
  externalColumnId: z.string(),
  name: z.string(),
  fieldType: z.string(),
  /** Present when the app could not take the source's name (too long, a forbidden character, taken): that name. */
  renamedFrom: z.string().optional(),
});
export const CreatedTable = z.object({
  sourceTableId: z.string(),
  externalTableId: Uuid,
  remoteId: z.string(),
  name: z.string(),
  /** Present when the app could not take the source table's name: that name. */
  renamedFrom: z.string().optional(),
  columns: z.array(CreatedColumn),
});

export const CreateTablesResponse = z.object({
  externalBaseId: Uuid,
  tables: z.array(CreatedTable),
});
export type CreateTablesResponse = z.infer<typeof CreateTablesResponse>;

export const CreateFieldsResponse = z.object({
  externalBaseId: Uuid,
  externalTableId: Uuid,
  columns: z.array(CreatedColumn),
});
export type CreateFieldsResponse = z.infer<typeof CreateFieldsResponse>;

/** create-tables-async: the job's tracker (GET /rest/progress/{trackingId}); its result is a CreateTablesResponse. */
export const CreateTablesAsyncResponse = z.object({ trackingId: Uuid });
export type CreateTablesAsyncResponse = z.infer<typeof CreateTablesAsyncResponse>;

export const SetupTableParams = z.object({
  externalTableId: z.string().uuid('must be an external table id (a UUID)'),
});

/**
 * A table created in the other app and mapped to its source, every created field paired (in the
 * direction the engine allows); a pair the engine refuses is left unmapped and listed with why.
 */
export const SetUpTable = z.object({
  sourceTableId: z.string(),
  tableMappingId: Uuid,
  created: CreatedTable,
  matchOnFieldId: Uuid.nullable(),
  unmappedFields: z.array(z.object({ sourceColumnId: z.string(), name: z.string(), reason: z.string() })),
});
export const SetupTablesResponse = z.object({
  setUp: z.array(SetUpTable),
  skipped: z.array(z.object({ tableId: z.string(), name: z.string(), reason: z.string() })),
});
export type SetupTablesResponse = z.infer<typeof SetupTablesResponse>;
