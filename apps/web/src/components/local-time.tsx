import { Text, type TextProps } from '@mantine/core';
import { formatLocalTime } from '../lib/local-time';

/** A moment in the user's locale and time zone; the stored instant on hover, to compare with logs. */
export function LocalTime({ iso, ...props }: { iso: string } & TextProps) {
  return (
    <Text component="time" dateTime={iso} title={iso} size="sm" {...props}>
      {formatLocalTime(iso)}
    </Text>
  );
}
