import { describe, expect, it } from 'vitest';
import { describeCounts, runOutcome } from './run-words';

describe('a run in words', () => {
  it("names the apps, not the sides' raw keys", () => {
    expect(
      describeCounts(
        { created_right: 60, updated_left: 2, echoes: 0, failed: 1 },
        { left: 'Demo CRM', right: 'Demo Newsletter' },
      ),
    ).toBe('60 created in Demo Newsletter, 2 updated in Demo CRM, 1 failed');
    expect(describeCounts({ deleted_left: 3 })).toBe('3 deleted on the left');
    expect(describeCounts({ echoes: 0 })).toBe('no changes');
  });

  it('does not show a run with failed records as a plain green done', () => {
    expect(runOutcome('done', { failed: 58 })).toEqual({ label: 'done, 58 failed', color: 'orange' });
    expect(runOutcome('done', { created_right: 3 })).toEqual({ label: 'done', color: 'green' });
    expect(runOutcome('failed', {})).toEqual({ label: 'failed', color: 'red' });
  });
});
