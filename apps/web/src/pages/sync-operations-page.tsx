import { SyncScreen } from '../components/sync-screen';
import { OperationsList } from './operations-page';

/** /syncs/{id}/operations: the operations list of one sync, with its exports. */
export function SyncOperationsPage() {
  return <SyncScreen title="Operations">{(sync) => <OperationsList coreBaseId={sync.id} />}</SyncScreen>;
}
