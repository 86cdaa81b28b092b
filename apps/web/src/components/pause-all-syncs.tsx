import { Button, Group } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../lib/api';
import { showError, showSuccess } from '../lib/notify';

/**
 * "Pause all" and "Resume all" for the user's syncs: pause switches off every sync that is on;
 * resume switches on exactly those again (not the ones that were off already).
 */
export function PauseAllSyncs() {
  const client = useQueryClient();
  const done = () => client.invalidateQueries({ queryKey: ['core-bases'] });
  const pause = useMutation({
    mutationFn: () => api<{ paused: number }>('/rest/core-bases/pause-all', { method: 'POST', body: {} }),
    onSuccess: (r) => {
      showSuccess(
        r.paused === 0 ? 'No sync was on.' : `${r.paused} sync${r.paused === 1 ? '' : 's'} paused.`,
      );
      return done();
    },
    onError: (e) => showError(e, 'Could not pause the syncs'),
  });
  const resume = useMutation({
    mutationFn: () => api<{ resumed: number }>('/rest/core-bases/resume-all', { method: 'POST', body: {} }),
    onSuccess: (r) => {
      showSuccess(
        r.resumed === 0
          ? 'No sync was paused by Pause all.'
          : `${r.resumed} sync${r.resumed === 1 ? '' : 's'} resumed.`,
      );
      return done();
    },
    onError: (e) => showError(e, 'Could not resume the syncs'),
  });
  return (
    <Group gap="xs">
      <Button variant="default" loading={pause.isPending} onClick={() => pause.mutate()}>
        Pause all
      </Button>
      <Button variant="default" loading={resume.isPending} onClick={() => resume.mutate()}>
        Resume all
      </Button>
    </Group>
  );
}
