import { describe, expect, it } from 'vitest';
import { canTransition, SYNC_PREVIEW_TRANSITIONS, SyncPreviewStatus, stepOfStatus } from './sync-preview';

describe('sync preview transitions', () => {
  it('follows the happy path scan -> merge -> preview -> apply', () => {
    expect(canTransition('new', 'downloading', 'client')).toBe(true);
    expect(canTransition('downloading', 'download_finished', 'server')).toBe(true);
    expect(canTransition('download_finished', 'planning', 'client')).toBe(true);
    expect(canTransition('planning', 'in_review', 'server')).toBe(true);
    expect(canTransition('in_review', 'applying', 'client')).toBe(true);
    expect(canTransition('applying', 'done', 'server')).toBe(true);
  });

  it('lets only the server finish work', () => {
    expect(canTransition('downloading', 'download_finished', 'client')).toBe(false);
    expect(canTransition('planning', 'in_review', 'client')).toBe(false);
    expect(canTransition('applying', 'done', 'client')).toBe(false);
  });

  it('cannot skip review, cancel while applying, or leave a final status', () => {
    expect(canTransition('new', 'applying', 'client')).toBe(false);
    expect(canTransition('download_finished', 'applying', 'client')).toBe(false);
    expect(canTransition('applying', 'cancelled', 'client')).toBe(false);
    for (const to of SyncPreviewStatus.options) {
      expect(canTransition('done', to, 'client')).toBe(false);
      expect(canTransition('cancelled', to, 'server')).toBe(false);
    }
  });

  it('gives every status a rule list and a UI step', () => {
    for (const status of SyncPreviewStatus.options) {
      expect(SYNC_PREVIEW_TRANSITIONS[status]).toBeDefined();
      expect(['scan', 'merge', 'preview']).toContain(stepOfStatus(status));
    }
  });
});
