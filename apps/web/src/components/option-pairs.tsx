import { optionKey } from '@lockstep/engine';
import { Autocomplete, Badge, Button, Group, Modal, Select, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import type { Column } from '../lib/sync-queries';

export type OptionPair = { left: string; right: string };

const isSelect = (c: Column | undefined) =>
  c?.fieldType === 'single_select' || c?.fieldType === 'multi_select';
const choicesOf = (c: Column | undefined): string[] =>
  Array.isArray(c?.options?.choices) ? (c.options.choices as unknown[]).map(String) : [];

/**
 * Which option of one field becomes which of the other, for a field pair with a select on either
 * side. Options without a pair go across by name; one the other side cannot hold is flagged, since
 * the sync would refuse it. Pairs from the left are looked up first both ways.
 */
export function OptionPairsButton({
  left,
  right,
  leftApp,
  rightApp,
  pairs,
  onChange,
}: {
  left: Column | undefined;
  right: Column | undefined;
  leftApp: string;
  rightApp: string;
  pairs: OptionPair[] | null;
  onChange: (pairs: OptionPair[]) => void;
}) {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState<OptionPair[]>([]);
  if (!left || !right || !(isSelect(left) || isSelect(right))) return null;
  const [leftChoices, rightChoices] = [choicesOf(left), choicesOf(right)];
  // A text side has no list of options: the values the pairs name stand for it.
  const leftOptions = isSelect(left) ? leftChoices : [...new Set((pairs ?? []).map((p) => p.left))];
  const rightOptions = isSelect(right) ? rightChoices : [...new Set((pairs ?? []).map((p) => p.right))];
  const sameName = (option: string, others: string[]) =>
    others.find((o) => optionKey(o) === optionKey(option));
  const goesTo = (side: 'left' | 'right', option: string, list: OptionPair[]) => {
    const pair = list.find((p) => p[side] === option);
    if (pair) return side === 'left' ? pair.right : pair.left;
    return sameName(option, side === 'left' ? rightChoices : leftChoices) ?? null;
  };
  // Unpaired: an option with nowhere to go on a side that holds only its own options.
  const unpaired = (list: OptionPair[]) => [
    ...(isSelect(right) ? leftOptions.filter((o) => goesTo('left', o, list) === null) : []),
    ...(isSelect(left) ? rightOptions.filter((o) => goesTo('right', o, list) === null) : []),
  ];
  const missing = unpaired(pairs ?? []);
  const setPair = (side: 'left' | 'right', option: string, to: string | null) =>
    setDraft((all) => {
      const rest = all.filter((p) => p[side] !== option);
      if (!to) return rest;
      const pair = side === 'left' ? { left: option, right: to } : { left: to, right: option };
      // Pairs from the left first: the engine looks a value up in the first pair that names it.
      return side === 'left' ? [pair, ...rest] : [...rest, pair];
    });
  const section = (side: 'left' | 'right') => {
    const options = side === 'left' ? leftOptions : rightOptions;
    const targets = side === 'left' ? rightChoices : leftChoices;
    const targetIsSelect = side === 'left' ? isSelect(right) : isSelect(left);
    const [from, to] = side === 'left' ? [leftApp, rightApp] : [rightApp, leftApp];
    if (options.length === 0) return null;
    return (
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>
              {from} · {(side === 'left' ? left : right).name}
            </Table.Th>
            <Table.Th>
              becomes in {to} · {(side === 'left' ? right : left).name}
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {options.map((option) => {
            const target = goesTo(side, option, draft);
            const label = `${option} in ${to}`;
            return (
              <Table.Tr key={option}>
                <Table.Td>{option}</Table.Td>
                <Table.Td>
                  {targetIsSelect ? (
                    <Select
                      aria-label={label}
                      data={targets}
                      value={target}
                      placeholder="Not paired: refused"
                      error={target === null ? true : undefined}
                      onChange={(v) => setPair(side, option, v)}
                      clearable
                    />
                  ) : (
                    <Autocomplete
                      aria-label={label}
                      data={targets}
                      value={target ?? option}
                      onChange={(v) => setPair(side, option, v.trim() === '' || v === option ? null : v)}
                    />
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    );
  };
  return (
    <>
      <Button
        variant="subtle"
        size="compact-xs"
        color={missing.length > 0 ? 'red' : undefined}
        onClick={() => {
          setDraft(pairs ?? []);
          setOpen(true);
        }}
      >
        {missing.length > 0 ? `Options: ${missing.length} not paired` : 'Options'}
      </Button>
      <Modal
        opened={open}
        onClose={() => setOpen(false)}
        title={`Options: ${left.name} ⇄ ${right.name}`}
        size="lg"
      >
        <Stack>
          <Text size="sm" c="dimmed">
            Each option becomes the one chosen here on the other side. Options left alone go across by name.
          </Text>
          {section('left')}
          {section('right')}
          <Group justify="space-between">
            {unpaired(draft).length > 0 ? (
              <Badge color="red" variant="light">
                {unpaired(draft).length} not paired: records with{' '}
                {unpaired(draft).length === 1 ? 'it' : 'them'} become issues
              </Badge>
            ) : (
              <span />
            )}
            <Button
              onClick={() => {
                onChange(draft);
                setOpen(false);
              }}
            >
              Keep these pairs
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
