import { Table, Text } from '@mantine/core';

export type FieldDiff = {
  field: string;
  /** False when the field is not in that image at all (a create has no before). */
  hasBefore: boolean;
  hasAfter: boolean;
  before: unknown;
  after: unknown;
  changed: boolean;
};

function asFields(image: unknown): Record<string, unknown> {
  if (image === null || image === undefined) return {};
  if (typeof image === 'object' && !Array.isArray(image)) return image as Record<string, unknown>;
  return { value: image };
}

/** Field by field, what one write changed: the fields of either image, in the order they first appear. */
export function diffFields(before: unknown, after: unknown): FieldDiff[] {
  const b = asFields(before);
  const a = asFields(after);
  const fields = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return fields.map((field) => {
    const hasBefore = field in b;
    const hasAfter = field in a;
    return {
      field,
      hasBefore,
      hasAfter,
      before: b[field],
      after: a[field],
      changed: hasBefore !== hasAfter || JSON.stringify(b[field]) !== JSON.stringify(a[field]),
    };
  });
}

/** A value as text: empty values say so, objects and lists as JSON. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(empty)';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const cell = { wordBreak: 'break-word', maxWidth: 360, verticalAlign: 'top' } as const;

/** A compact before/after table of one write; changed fields first-class, unchanged ones dimmed. */
export function ChangeDiffTable({
  before,
  after,
  fieldLabel = (f) => f,
}: {
  before: unknown;
  after: unknown;
  fieldLabel?: (field: string) => string;
}) {
  // An update records the before values of the fields it changed and the whole post-image after;
  // the other fields of the post-image were not touched, so they are left out of the diff.
  const isUpdate = Object.keys(asFields(before)).length > 0 && Object.keys(asFields(after)).length > 0;
  const rows = diffFields(before, after).filter((r) => !isUpdate || r.hasBefore);
  if (rows.length === 0)
    return (
      <Text size="xs" c="dimmed">
        No field values recorded.
      </Text>
    );
  return (
    <Table withRowBorders={false} verticalSpacing={2} horizontalSpacing="xs" fz="xs" layout="fixed">
      <Table.Thead>
        <Table.Tr>
          <Table.Th w="30%">Field</Table.Th>
          <Table.Th>Before</Table.Th>
          <Table.Th>After</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.field} data-changed={r.changed || undefined} c={r.changed ? undefined : 'dimmed'}>
            <Table.Td style={cell} fw={r.changed ? 600 : undefined}>
              {fieldLabel(r.field)}
            </Table.Td>
            <Table.Td style={cell}>
              {!r.hasBefore ? (
                <Text span size="xs" c="dimmed">
                  —
                </Text>
              ) : r.changed ? (
                <Text component="del" size="xs" c="red.8">
                  {formatValue(r.before)}
                </Text>
              ) : (
                formatValue(r.before)
              )}
            </Table.Td>
            <Table.Td style={cell}>
              {!r.hasAfter ? (
                <Text span size="xs" c="dimmed">
                  —
                </Text>
              ) : r.changed ? (
                <Text component="ins" size="xs" c="green.9" style={{ textDecoration: 'none' }}>
                  {formatValue(r.after)}
                </Text>
              ) : (
                formatValue(r.after)
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
