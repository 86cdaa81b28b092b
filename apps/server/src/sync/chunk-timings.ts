/**
 * Where a process's sync chunks spend their time, stage by stage (milliseconds summed since start):
 * the benches print it, so a slow stage shows up without a profiler.
 */
export const chunkTimings = new Map<string, number>();

/** Laps of one chunk: each `lap(stage)` adds the time since the previous lap to that stage. */
export function stopwatch() {
  let last = performance.now();
  return (stage: string) => {
    const now = performance.now();
    chunkTimings.set(stage, (chunkTimings.get(stage) ?? 0) + (now - last));
    last = now;
  };
}
