import { Code, Group, Spoiler, Text } from '@mantine/core';

/** A batch of creates logged as one operation (a first sync's chunk): the records it made. */
export function BatchRecords({ records }: { records: { remote: string[]; source: string[] } }) {
  return (
    <div>
      <Text size="sm" mb={4}>
        Created {records.remote.length.toLocaleString()} records, each a copy of a record on the other side
        (created id ← copied from). A record's values are on its status page.
      </Text>
      <Spoiler maxHeight={120} showLabel="Show all" hideLabel="Show fewer">
        <Group gap={6}>
          {records.remote.map((id, i) => (
            <Code key={id}>
              {id} ← {records.source[i]}
            </Code>
          ))}
        </Group>
      </Spoiler>
    </div>
  );
}
