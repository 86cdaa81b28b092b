import { useParams } from 'react-router';
import { RecordStatusView } from '../components/record-status-view';
import { SyncScreen } from '../components/sync-screen';

/** /syncs/{id}/record-status/{recordId}: both sides of one linked record, its shadow and its history. */
export function RecordStatusPage() {
  const { recordId } = useParams();
  return (
    <SyncScreen title="Record status">
      {(sync) => <RecordStatusView key={recordId} sync={sync} recordId={recordId as string} />}
    </SyncScreen>
  );
}
