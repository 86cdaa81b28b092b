import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWakeCoalescer } from './wake-coalescer';

describe('wake-up coalescing', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('wakes a sync at once, then turns a burst of wake-ups into one more per window', async () => {
    const sent: string[] = [];
    const c = createWakeCoalescer(async (id) => sent.push(id), 100);
    c.wake('a');
    expect(sent).toEqual(['a']);
    // 1,000 commits within the window: one trailing wake-up when it ends, none lost.
    for (let i = 0; i < 1000; i++) c.wake('a');
    expect(sent).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(100);
    expect(sent).toEqual(['a', 'a']);
    // Quiet for a window: the next wake-up goes at once again.
    await vi.advanceTimersByTimeAsync(100);
    c.wake('a');
    expect(sent).toEqual(['a', 'a', 'a']);
    c.stop();
  });

  it('keeps syncs apart: one sync waiting does not hold back another', () => {
    const sent: string[] = [];
    const c = createWakeCoalescer(async (id) => sent.push(id), 100);
    c.wake('a');
    c.wake('a');
    c.wake('b');
    expect(sent).toEqual(['a', 'b']);
    c.stop();
  });

  it('a sustained stream of commits wakes a sync about once per window', async () => {
    const sent: string[] = [];
    const c = createWakeCoalescer(async (id) => sent.push(id), 100);
    // One commit every millisecond for a second.
    for (let ms = 0; ms < 1000; ms++) {
      c.wake('a');
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(200);
    expect(sent.length).toBeGreaterThanOrEqual(10);
    expect(sent.length).toBeLessThanOrEqual(12);
    c.stop();
  });
});
