import { RUN_STATUS_COLOR } from '../components/run-view-types';

/** The apps of a sync by side, to say "created in Demo Newsletter" rather than "created_right". */
export type SideNames = { left?: string | null; right?: string | null };

const side = (names: SideNames, which: 'left' | 'right') => {
  const name = names[which];
  return name ? `in ${name}` : `on the ${which}`;
};

const word = (kind: string, names: SideNames): string => {
  const m = /^(created|updated|deleted)_(left|right)$/.exec(kind);
  if (m) return `${m[1]} ${side(names, m[2] as 'left' | 'right')}`;
  if (kind === 'failed') return 'failed';
  if (kind === 'conflicts') return 'conflicts';
  if (kind === 'echoes') return "of Lockstep's own writes seen back";
  return kind.replaceAll('_', ' ');
};

/** "60 created in Demo Newsletter, 1 failed": what one run changed, in words. */
export function describeCounts(counts: Record<string, number>, names: SideNames = {}): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n.toLocaleString()} ${word(kind, names)}`);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

/** A run's outcome as a badge: a finished run with failed records is not a plain green "done". */
export function runOutcome(
  status: keyof typeof RUN_STATUS_COLOR,
  counts: Record<string, number>,
): { label: string; color: string } {
  const failed = counts.failed ?? 0;
  if (status === 'done' && failed > 0)
    return { label: `done, ${failed.toLocaleString()} failed`, color: 'orange' };
  return { label: status, color: RUN_STATUS_COLOR[status] };
}
