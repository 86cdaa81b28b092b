/**
 * Hand-written, typed description of the Affinity API for the contract test. Affinity ships no
 * SDK and no maintained npm client generated from its OpenAPI document exists, so these zod
 * schemas were written field by field from the v2 OpenAPI document (version 2024-01-01:
 * Person, Company, Opportunity, ListWithType, CompanyListEntry/PersonListEntry/
 * OpportunityListEntry, Field, FieldValue and its 17 value shapes, FieldMetadata, Pagination,
 * WhoAmI, Errors) and from the v1 reference for the write endpoints. Objects are strict: a
 * property the document does not name fails the parse, as a missing required one does.
 * The `paths` types give openapi-fetch its typed calls.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// v2 (OpenAPI)

const id = z.number().int().min(1);
const nullableString = z.string().nullable();

export const PersonData = z.strictObject({
  id,
  firstName: nullableString,
  lastName: nullableString,
  primaryEmailAddress: z.email().nullable(),
  type: z.enum(['internal', 'external', 'collaborator']),
});
export const CompanyData = z.strictObject({ id, name: z.string(), domain: nullableString });
const Dropdown = z.strictObject({ dropdownOptionId: id, text: z.string() });
const RankedDropdown = z.strictObject({
  dropdownOptionId: id,
  text: z.string(),
  rank: z.number().int().min(0),
  color: nullableString,
});
const Location = z.strictObject({
  streetAddress: nullableString,
  city: nullableString,
  state: nullableString,
  country: nullableString,
  continent: nullableString,
});

export const FieldValue = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('company'), data: CompanyData.nullable() }),
  z.strictObject({ type: z.literal('company-multi'), data: z.array(CompanyData).nullable() }),
  z.strictObject({ type: z.literal('datetime'), data: z.iso.datetime({ offset: true }).nullable() }),
  z.strictObject({ type: z.literal('dropdown'), data: Dropdown.nullable() }),
  z.strictObject({ type: z.literal('dropdown-multi'), data: z.array(Dropdown).nullable() }),
  z.strictObject({ type: z.literal('filterable-text'), data: nullableString }),
  z.strictObject({ type: z.literal('filterable-text-multi'), data: z.array(z.string()).nullable() }),
  z.strictObject({
    type: z.literal('formula-number'),
    data: z.strictObject({ calculatedValue: z.number().nullable() }).nullable(),
  }),
  z.strictObject({ type: z.literal('interaction'), data: z.record(z.string(), z.unknown()).nullable() }),
  z.strictObject({ type: z.literal('location'), data: Location.nullable() }),
  z.strictObject({ type: z.literal('location-multi'), data: z.array(Location).nullable() }),
  z.strictObject({ type: z.literal('number'), data: z.number().nullable() }),
  z.strictObject({ type: z.literal('number-multi'), data: z.array(z.number()).nullable() }),
  z.strictObject({ type: z.literal('person'), data: PersonData.nullable() }),
  z.strictObject({ type: z.literal('person-multi'), data: z.array(PersonData).nullable() }),
  z.strictObject({ type: z.literal('ranked-dropdown'), data: RankedDropdown.nullable() }),
  z.strictObject({ type: z.literal('text'), data: nullableString }),
]);

export const Field = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: z.enum(['enriched', 'global', 'list', 'relationship-intelligence']),
  enrichmentSource: z.enum(['affinity-data', 'dealroom']).nullable(),
  value: FieldValue,
});

export const Person = z.strictObject({
  id,
  firstName: z.string(),
  lastName: nullableString,
  primaryEmailAddress: z.email().nullable(),
  emailAddresses: z.array(z.email()),
  type: z.enum(['internal', 'external']),
  fields: z.array(Field).optional(),
});

export const Company = z.strictObject({
  id,
  name: z.string(),
  domain: nullableString,
  domains: z.array(z.string()),
  isGlobal: z.boolean(),
  fields: z.array(Field).optional(),
});

export const Opportunity = z.strictObject({ id, name: z.string(), listId: id });
const OpportunityWithFields = Opportunity.extend({ fields: z.array(Field).optional() });

export const List = z.strictObject({
  id,
  name: z.string(),
  type: z.enum(['company', 'opportunity', 'person']),
  isPublic: z.boolean(),
  ownerId: id,
  creatorId: id,
});

const entryBase = { id, listId: id, createdAt: z.iso.datetime({ offset: true }), creatorId: id.nullable() };
export const ListEntry = z.discriminatedUnion('type', [
  z.strictObject({ ...entryBase, type: z.literal('company'), entity: Company }),
  z.strictObject({ ...entryBase, type: z.literal('person'), entity: Person }),
  z.strictObject({ ...entryBase, type: z.literal('opportunity'), entity: OpportunityWithFields }),
]);

export const FieldMetadata = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: z.enum(['enriched', 'global', 'list', 'relationship-intelligence']),
  enrichmentSource: z.enum(['affinity-data', 'dealroom']).nullable(),
  valueType: z.enum([
    'person',
    'person-multi',
    'company',
    'company-multi',
    'filterable-text',
    'filterable-text-multi',
    'number',
    'number-multi',
    'datetime',
    'location',
    'location-multi',
    'text',
    'ranked-dropdown',
    'dropdown',
    'dropdown-multi',
    'formula-number',
    'interaction',
  ]),
});

export const Pagination = z.strictObject({
  nextUrl: z.url().nullable().optional(),
  prevUrl: z.url().nullable().optional(),
});
export const paged = <T extends z.ZodType>(item: T) =>
  z.strictObject({ data: z.array(item), pagination: Pagination });

export const WhoAmI = z.strictObject({
  tenant: z.strictObject({ id, name: z.string(), subdomain: z.string() }),
  user: z.strictObject({ id, firstName: z.string(), lastName: nullableString, emailAddress: z.email() }),
  grant: z.strictObject({
    type: z.enum(['api-key', 'access-token']),
    scopes: z.array(z.string()),
    createdAt: z.iso.datetime({ offset: true }),
  }),
});

export const V2Errors = z.strictObject({
  errors: z.array(
    z.strictObject({
      code: z.enum([
        'authentication',
        'authorization',
        'bad-request',
        'conflict',
        'method-not-allowed',
        'not-acceptable',
        'not-found',
        'not-implemented',
        'rate-limit',
        'server',
        'unprocessable-entity',
        'unsupported-media-type',
        'validation',
      ]),
      message: z.string(),
      param: z.string().optional(),
    }),
  ),
});

// ---------------------------------------------------------------------------------------------
// v1 (reference documentation; no machine-readable spec exists)

export const V1Person = z.strictObject({
  id,
  type: z.union([z.literal(0), z.literal(1)]),
  first_name: z.string(),
  last_name: nullableString,
  primary_email: nullableString,
  emails: z.array(z.string()),
  organization_ids: z.array(id),
});
export const V1Organization = z.strictObject({
  id,
  name: z.string(),
  domain: nullableString,
  domains: z.array(z.string()),
  global: z.boolean(),
  person_ids: z.array(id),
});
const V1ListEntryBrief = z.strictObject({
  id,
  list_id: id,
  creator_id: id.nullable(),
  entity_id: id,
  entity_type: z.number().int(),
  created_at: z.iso.datetime({ offset: true }),
});
export const V1Opportunity = z.strictObject({
  id,
  name: z.string(),
  person_ids: z.array(id),
  organization_ids: z.array(id),
  list_entries: z.array(V1ListEntryBrief),
});
export const V1ListEntry = V1ListEntryBrief.extend({ entity: z.record(z.string(), z.unknown()) });
export const V1FieldValue = z.strictObject({
  id,
  field_id: id,
  list_entry_id: id.nullable(),
  entity_id: id,
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }).nullable(),
  value: z.unknown(),
});
export const V1Field = z.strictObject({
  id,
  name: z.string(),
  list_id: id.nullable(),
  enrichment_source: z.string(),
  value_type: z.number().int().min(0).max(7),
  allows_multiple: z.boolean(),
  track_changes: z.boolean(),
  dropdown_options: z.array(
    z.strictObject({ id, text: z.string(), rank: z.number().int(), color: z.number().int() }),
  ),
});
export const V1Success = z.strictObject({ success: z.literal(true) });
export const V1Errors = z.strictObject({ errors: z.array(z.string()) });

// ---------------------------------------------------------------------------------------------
// openapi-fetch path types

type Out<T extends z.ZodType> = z.output<T>;
type JsonContent<T> = { content: { 'application/json': T } };
type V2ErrorResponses = {
  400: JsonContent<Out<typeof V2Errors>>;
  401: JsonContent<Out<typeof V2Errors>>;
  404: JsonContent<Out<typeof V2Errors>>;
  429: JsonContent<Out<typeof V2Errors>>;
  default: JsonContent<Out<typeof V2Errors>>;
};
type V1ErrorResponses = {
  401: JsonContent<Out<typeof V1Errors>>;
  404: JsonContent<Out<typeof V1Errors>>;
  422: JsonContent<Out<typeof V1Errors>>;
  429: JsonContent<Out<typeof V1Errors>>;
  default: JsonContent<Out<typeof V1Errors>>;
};
type Params<Q, P> = { query?: Q; header?: never; cookie?: never } & ([P] extends [never]
  ? { path?: never }
  : { path: P });
type Get<Q, P, R> = {
  parameters: Params<Q, P>;
  requestBody?: never;
  responses: { 200: JsonContent<R> } & V2ErrorResponses;
};
type Write<P, B, R> = {
  parameters: Params<never, P>;
  responses: { 200: JsonContent<R> } & V1ErrorResponses;
} & ([B] extends [never] ? { requestBody?: never } : { requestBody: { content: { 'application/json': B } } });
type V1Get<Q, P, R> = {
  parameters: Params<Q, P>;
  requestBody?: never;
  responses: { 200: JsonContent<R> } & V1ErrorResponses;
};
type Item<M> = { parameters: { query?: never; header?: never; path?: never; cookie?: never } } & M;
type PageQ = { cursor?: string; limit?: number };
type FieldQ<T extends string> = { fieldIds?: string[]; fieldTypes?: T[] };
type EntityFieldTypes = 'enriched' | 'global' | 'relationship-intelligence';
type NoPath = never;

export type V2Paths = {
  '/v2/auth/whoami': Item<{ get: Get<never, NoPath, Out<typeof WhoAmI>> }>;
  '/v2/persons': Item<{
    get: Get<
      PageQ & FieldQ<EntityFieldTypes> & { ids?: number[] },
      NoPath,
      Out<ReturnType<typeof paged<typeof Person>>>
    >;
  }>;
  '/v2/persons/{personId}': Item<{
    get: Get<FieldQ<EntityFieldTypes>, { personId: number }, Out<typeof Person>>;
  }>;
  '/v2/persons/fields': Item<{
    get: Get<PageQ, NoPath, Out<ReturnType<typeof paged<typeof FieldMetadata>>>>;
  }>;
  '/v2/companies': Item<{
    get: Get<
      PageQ & FieldQ<EntityFieldTypes> & { ids?: number[] },
      NoPath,
      Out<ReturnType<typeof paged<typeof Company>>>
    >;
  }>;
  '/v2/companies/{companyId}': Item<{
    get: Get<FieldQ<EntityFieldTypes>, { companyId: number }, Out<typeof Company>>;
  }>;
  '/v2/opportunities': Item<{
    get: Get<PageQ & { ids?: number[] }, NoPath, Out<ReturnType<typeof paged<typeof Opportunity>>>>;
  }>;
  '/v2/opportunities/{opportunityId}': Item<{
    get: Get<never, { opportunityId: number }, Out<typeof Opportunity>>;
  }>;
  '/v2/lists': Item<{ get: Get<PageQ, NoPath, Out<ReturnType<typeof paged<typeof List>>>> }>;
  '/v2/lists/{listId}': Item<{ get: Get<never, { listId: number }, Out<typeof List>> }>;
  '/v2/lists/{listId}/fields': Item<{
    get: Get<PageQ, { listId: number }, Out<ReturnType<typeof paged<typeof FieldMetadata>>>>;
  }>;
  '/v2/lists/{listId}/list-entries': Item<{
    get: Get<
      PageQ & FieldQ<EntityFieldTypes | 'list'>,
      { listId: number },
      Out<ReturnType<typeof paged<typeof ListEntry>>>
    >;
  }>;
  '/v2/lists/{listId}/list-entries/{listEntryId}': Item<{
    get: Get<
      FieldQ<EntityFieldTypes | 'list'>,
      { listId: number; listEntryId: number },
      Out<typeof ListEntry>
    >;
  }>;
};

type PersonBody = {
  first_name?: string;
  last_name?: string | null;
  emails?: string[];
  organization_ids?: number[];
};
type OrgBody = { name?: string; domain?: string | null; person_ids?: number[] };
type OppBody = { name?: string; list_id?: number; person_ids?: number[]; organization_ids?: number[] };
type FieldValueBody = {
  field_id?: number;
  entity_id?: number;
  list_entry_id?: number | null;
  value?: unknown;
};

export type V1Paths = {
  '/persons': Item<{ post: Write<NoPath, PersonBody, Out<typeof V1Person>> }>;
  '/persons/{person_id}': Item<{
    get: V1Get<{ with_opportunities?: boolean }, { person_id: number }, Out<typeof V1Person>>;
    put: Write<{ person_id: number }, PersonBody, Out<typeof V1Person>>;
    delete: Write<{ person_id: number }, never, Out<typeof V1Success>>;
  }>;
  '/organizations': Item<{ post: Write<NoPath, OrgBody, Out<typeof V1Organization>> }>;
  '/organizations/{organization_id}': Item<{
    put: Write<{ organization_id: number }, OrgBody, Out<typeof V1Organization>>;
    delete: Write<{ organization_id: number }, never, Out<typeof V1Success>>;
  }>;
  '/opportunities': Item<{ post: Write<NoPath, OppBody, Out<typeof V1Opportunity>> }>;
  '/opportunities/{opportunity_id}': Item<{
    put: Write<{ opportunity_id: number }, OppBody, Out<typeof V1Opportunity>>;
    delete: Write<{ opportunity_id: number }, never, Out<typeof V1Success>>;
  }>;
  '/lists/{list_id}/list-entries': Item<{
    post: Write<{ list_id: number }, { entity_id?: number; creator_id?: number }, Out<typeof V1ListEntry>>;
  }>;
  '/lists/{list_id}/list-entries/{list_entry_id}': Item<{
    delete: Write<{ list_id: number; list_entry_id: number }, never, Out<typeof V1Success>>;
  }>;
  '/fields': Item<{
    get: V1Get<
      { list_id?: number; entity_type?: number; value_type?: number },
      NoPath,
      Out<typeof V1Field>[]
    >;
  }>;
  '/field-values': Item<{
    get: V1Get<
      { person_id?: number; organization_id?: number; opportunity_id?: number; list_entry_id?: number },
      NoPath,
      Out<typeof V1FieldValue>[]
    >;
    post: Write<NoPath, FieldValueBody, Out<typeof V1FieldValue>>;
  }>;
  '/field-values/{field_value_id}': Item<{
    put: Write<{ field_value_id: number }, { value: unknown }, Out<typeof V1FieldValue>>;
    delete: Write<{ field_value_id: number }, never, Out<typeof V1Success>>;
  }>;
};
