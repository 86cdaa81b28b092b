import { ROUTE_PROGRESS } from '@lockstep/contract';
import { useEffect, useRef, useState } from 'react';

/**
 * The route progress bar's value (spec sections 2 and 9): nothing for the first 250 ms of a route
 * change; then it grows 3 percent every 150 ms up to 90; when the change ends (done or error) it
 * jumps to 100 and hides. Returns null while hidden.
 */
export function useRouteProgress(active: boolean): number | null {
  const [value, setValue] = useState<number | null>(null);
  const shown = useRef(false);

  useEffect(() => {
    if (!active) {
      if (!shown.current) return;
      setValue(100);
      const hide = setTimeout(() => {
        shown.current = false;
        setValue(null);
      }, 200);
      return () => clearTimeout(hide);
    }
    let grow: ReturnType<typeof setInterval> | undefined;
    const appear = setTimeout(() => {
      shown.current = true;
      setValue(0);
      grow = setInterval(() => {
        setValue((v) => Math.min(ROUTE_PROGRESS.capPercent, (v ?? 0) + ROUTE_PROGRESS.stepPercent));
      }, ROUTE_PROGRESS.stepEveryMs);
    }, ROUTE_PROGRESS.appearAfterMs);
    return () => {
      clearTimeout(appear);
      if (grow) clearInterval(grow);
    };
  }, [active]);

  return value;
}
