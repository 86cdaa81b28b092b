// A full ISO instant (date, time and zone). A bare date ("2026-01-03") is left alone: it names a
// day, not a moment, and shifting it into a time zone could show the day before.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export function isInstant(value: unknown): value is string {
  return typeof value === 'string' && INSTANT.test(value) && !Number.isNaN(Date.parse(value));
}

const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A moment in the user's own locale and time zone; text that is not a date is returned as is. */
export function formatLocalTime(iso: string): string {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? iso : format.format(time);
}
