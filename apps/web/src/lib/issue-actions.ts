/** Where a person fixes an issue of a given cause, one click away from the issue. */
export type IssueAction = { label: string; to: string };

/**
 * The fix for a cause, by its code: values the other app cannot hold are fixed in the field
 * mapping (pair the option, map or fill the field), matching problems in the table pair's match
 * field, failing credentials by reconnecting, a held mass delete on the overview, the record limit
 * on the plans page. Causes a retry fixes (rate limits, outages) have none: Retry is on the page.
 */
export function issueActionOf(issue: {
  code: string;
  coreBaseId: string;
  tableMappingId?: string | null;
}): IssueAction | null {
  const sync = `/syncs/${issue.coreBaseId}`;
  const tm = issue.tableMappingId;
  switch (issue.code) {
    case 'unmapped_option':
      return tm ? { label: 'Pair the options', to: `${sync}/table-mappings/${tm}/field-mappings` } : null;
    case 'type_mismatch':
    case 'required_missing':
    case 'validation':
      return tm
        ? { label: 'Open the field mapping', to: `${sync}/table-mappings/${tm}/field-mappings` }
        : null;
    case 'missing_key':
    case 'duplicate_key':
      return tm ? { label: 'Pick a match field', to: `${sync}/table-mapping-editor/${tm}` } : null;
    case 'auth_invalid':
    case 'permission_denied':
    case 'access_denied':
    case 'connection_failed':
      return { label: 'Reconnect the app', to: `/syncs/edit/${issue.coreBaseId}` };
    case 'mass_delete':
      return { label: 'Review the deletions', to: `${sync}/overview` };
    case 'record_limit':
      return { label: 'See plans', to: '/subscription/manage' };
    default:
      return null;
  }
}

/** "Ada Lovelace" when the record's name is known, else its id. */
export const recordLabel = (r: { remoteId: string; name?: string | null }) => r.name ?? r.remoteId;
