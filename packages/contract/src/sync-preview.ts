import { z } from 'zod';
import { IsoTimestamp, Uuid } from './formats';

export const SyncPreviewStatus = z.enum([
  'new',
  'downloading',
  'download_finished',
  'planning',
  'planning_problem',
  'in_review',
  'applying',
  'done',
  'download_failed',
  'applying_failed',
  'cancelled',
]);
export type SyncPreviewStatus = z.infer<typeof SyncPreviewStatus>;

/** Who moves a preview: the client by PATCH, or the server's workers as the work finishes. */
export type PreviewActor = 'client' | 'server';

type Rule = { to: SyncPreviewStatus; by: PreviewActor[] };

/**
 * The allowed transitions of a sync preview (spec section 4 lists the statuses; the transitions
 * are ours). Downloading, planning and applying are started by the client and finished by the
 * server; cancelling is possible until applying starts; done and cancelled are final.
 */
export const SYNC_PREVIEW_TRANSITIONS: Record<SyncPreviewStatus, Rule[]> = {
  new: [
    { to: 'downloading', by: ['client', 'server'] },
    { to: 'cancelled', by: ['client'] },
  ],
  downloading: [
    { to: 'download_finished', by: ['server'] },
    { to: 'download_failed', by: ['server'] },
    { to: 'cancelled', by: ['client', 'server'] },
  ],
  download_failed: [
    { to: 'downloading', by: ['client'] },
    { to: 'cancelled', by: ['client'] },
  ],
  download_finished: [
    { to: 'planning', by: ['client', 'server'] },
    { to: 'downloading', by: ['client'] },
    { to: 'cancelled', by: ['client'] },
  ],
  planning: [
    { to: 'in_review', by: ['server'] },
    { to: 'planning_problem', by: ['server'] },
    { to: 'cancelled', by: ['client', 'server'] },
  ],
  planning_problem: [
    { to: 'planning', by: ['client'] },
    { to: 'downloading', by: ['client'] },
    { to: 'cancelled', by: ['client'] },
  ],
  in_review: [
    { to: 'applying', by: ['client'] },
    { to: 'planning', by: ['client'] },
    { to: 'downloading', by: ['client'] },
    { to: 'cancelled', by: ['client'] },
  ],
  applying: [
    { to: 'done', by: ['server'] },
    { to: 'applying_failed', by: ['server'] },
  ],
  applying_failed: [
    { to: 'applying', by: ['client'] },
    { to: 'cancelled', by: ['client'] },
  ],
  done: [],
  cancelled: [],
};

export function canTransition(from: SyncPreviewStatus, to: SyncPreviewStatus, actor: PreviewActor): boolean {
  return SYNC_PREVIEW_TRANSITIONS[from].some((rule) => rule.to === to && rule.by.includes(actor));
}

/** The UI step that shows a status: scan (record scanning), merge (matching) or preview. */
export function stepOfStatus(status: SyncPreviewStatus): 'scan' | 'merge' | 'preview' {
  if (status === 'new' || status === 'downloading' || status === 'download_failed') return 'scan';
  if (status === 'download_finished' || status === 'planning' || status === 'planning_problem')
    return 'merge';
  return 'preview';
}

export const SyncPreview = z.object({
  id: Uuid,
  status: SyncPreviewStatus,
  coreBaseId: Uuid,
  coreTableIds: z.array(z.string()),
  trackingId: Uuid.nullable(),
  summary: z.record(z.string(), z.unknown()),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
});
export type SyncPreview = z.infer<typeof SyncPreview>;
