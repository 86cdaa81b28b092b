import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useRouteProgress } from './use-route-progress';

describe('route progress (spec sections 2 and 9)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('stays hidden for a route change shorter than 250 ms', () => {
    const { result, rerender } = renderHook(({ active }) => useRouteProgress(active), {
      initialProps: { active: true },
    });
    act(() => vi.advanceTimersByTime(240));
    expect(result.current).toBeNull();
    rerender({ active: false });
    act(() => vi.advanceTimersByTime(1000));
    expect(result.current).toBeNull();
  });

  it('appears after 250 ms, grows 3 percent per 150 ms, caps at 90, and jumps to 100 when done', () => {
    const { result, rerender } = renderHook(({ active }) => useRouteProgress(active), {
      initialProps: { active: true },
    });
    act(() => vi.advanceTimersByTime(250));
    expect(result.current).toBe(0);
    act(() => vi.advanceTimersByTime(150));
    expect(result.current).toBe(3);
    act(() => vi.advanceTimersByTime(150 * 9));
    expect(result.current).toBe(30);
    act(() => vi.advanceTimersByTime(150 * 100));
    expect(result.current).toBe(90);
    rerender({ active: false });
    expect(result.current).toBe(100);
    act(() => vi.advanceTimersByTime(300));
    expect(result.current).toBeNull();
  });
});
