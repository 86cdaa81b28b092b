export {
  dropRoleByHandSql,
  dropRoleSql,
  listSchemasSql,
  roleSql,
  SUPABASE_INTERNAL_SCHEMAS,
  schemaGrantSql,
} from './database-access';
export {
  createManagementClient,
  type ManagementClient,
  mapSupabaseError,
  requestSupabaseTokens,
  SUPABASE_API_URL,
  type SupabaseOrganization,
  type SupabaseProject,
  type SupabaseTokens,
  supabaseAuthorizeUrl,
} from './management-api';
export {
  createSupabasePort,
  parseSupabaseBase,
  type SaveItems,
  SUPABASE_DATABASE_ERRORS,
  type SupabaseItems,
  type SupabasePort,
  type SupabaseSettings,
  type SupabaseTls,
  supabaseCertificateAdvice,
  supabaseDatabaseItems,
  tokenItems,
} from './port';
