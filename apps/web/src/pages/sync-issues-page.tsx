import { SyncScreen } from '../components/sync-screen';
import { IssuesList } from './issues-page';

/** /syncs/{id}/issues: the issues list with filters {"coreBaseId": id}. */
export function SyncIssuesPage() {
  return <SyncScreen title="Issues">{(sync) => <IssuesList coreBaseId={sync.id} />}</SyncScreen>;
}
