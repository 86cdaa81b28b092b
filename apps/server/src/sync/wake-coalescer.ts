/**
 * Coalesces wake-ups of the same sync: the first wakes it at once (a single edit keeps its latency),
 * and the wake-ups that arrive within the next `windowMs` become one more wake-up at the end of the
 * window. A burst of commits on a watched table then costs at most one queue send per sync per
 * window, not one per commit (3,000 commits used to mean 3,000 job inserts for 79 runs). None is
 * dropped: a change committed during a window is read by the run its trailing wake-up queues.
 * The window is short: an edit inside it waits for its end (with 100 ms, edits made one after the
 * other each waited ~100 ms; a run takes ~15 ms).
 */
export function createWakeCoalescer(wake: (id: string) => Promise<unknown>, windowMs = 20) {
  const open = new Map<string, { again: boolean; timer: ReturnType<typeof setTimeout> }>();
  const fire = (id: string) => void wake(id).catch(() => {});
  const close = (id: string) => {
    const window = open.get(id);
    if (!window) return;
    if (!window.again) {
      open.delete(id);
      return;
    }
    window.again = false;
    fire(id);
    window.timer = setTimeout(() => close(id), windowMs);
  };
  return {
    wake(id: string) {
      const window = open.get(id);
      if (window) {
        window.again = true;
        return;
      }
      fire(id);
      open.set(id, { again: false, timer: setTimeout(() => close(id), windowMs) });
    },
    stop() {
      for (const w of open.values()) clearTimeout(w.timer);
      open.clear();
    },
  };
}
