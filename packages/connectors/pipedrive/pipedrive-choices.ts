/**
 * The named choices of Pipedrive's id attributes: a record's owner is one of the company's users
 * (`GET /api/v1/users`), a deal's pipeline one of the pipelines (`GET /api/v2/pipelines`) and its
 * stage one of the stages of those pipelines (`GET /api/v2/stages`). Synced as selects of names,
 * written back as the ids. Names that two rows share are told apart (a user by email, a stage by
 * its pipeline) so every option names one id.
 */
import type { PipedriveClient } from './pipedrive-api';

export type PipedriveUser = {
  id: number;
  name?: string | null;
  email?: string | null;
  active_flag?: boolean;
};
export type PipedrivePipeline = { id: number; name?: string | null; is_deleted?: boolean };
export type PipedriveStage = {
  id: number;
  name?: string | null;
  pipeline_id?: number | null;
  order_nr?: number | null;
  is_deleted?: boolean;
};

/** What the selects are made of (an entity type's share: persons and organizations need users only). */
export type PipedriveChoices = {
  users: PipedriveUser[];
  pipelines: PipedrivePipeline[];
  stages: PipedriveStage[];
};

export type PipedriveOption = { id: number; label: string };

/** Which list an id attribute takes its names from. */
export type PipedriveChoiceKind = 'users' | 'pipelines' | 'stages';

/** Pipedrive's v2 lists of configuration (pipelines, stages): every page, by `next_cursor`. */
async function allV2<T>(client: PipedriveClient, path: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const { body } = await client.request<{
      data: T[] | null;
      additional_data?: { next_cursor?: string | null };
    }>({ method: 'GET', path, query: { limit: 500, ...(cursor ? { cursor } : {}) } });
    out.push(...(body?.data ?? []));
    cursor = body?.additional_data?.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return out;
}

/** The users, and for deals the pipelines and stages, of the company (three requests at most). */
export async function fetchPipedriveChoices(
  client: PipedriveClient,
  type: 'persons' | 'organizations' | 'deals',
): Promise<PipedriveChoices> {
  const { body } = await client.request<{ data: PipedriveUser[] | null }>({
    method: 'GET',
    path: '/api/v1/users',
  });
  const users = body?.data ?? [];
  if (type !== 'deals') return { users, pipelines: [], stages: [] };
  const pipelines = (await allV2<PipedrivePipeline>(client, '/api/v2/pipelines')).filter(
    (p) => !p.is_deleted,
  );
  const stages = (await allV2<PipedriveStage>(client, '/api/v2/stages')).filter((s) => !s.is_deleted);
  return { users, pipelines, stages };
}

/** Labels made unique: a name two rows share gets what tells them apart (`more`), then the id. */
function unique(rows: { id: number; name: string; more?: string }[]): PipedriveOption[] {
  const count = new Map<string, number>();
  for (const r of rows) count.set(r.name.toLowerCase(), (count.get(r.name.toLowerCase()) ?? 0) + 1);
  const taken = new Set<string>();
  return rows.map((r) => {
    let label = (count.get(r.name.toLowerCase()) ?? 0) > 1 && r.more ? `${r.name} (${r.more})` : r.name;
    if (taken.has(label.toLowerCase())) label = `${label} #${r.id}`;
    taken.add(label.toLowerCase());
    return { id: r.id, label };
  });
}

/** The options of one id attribute, in Pipedrive's order (stages by pipeline, then position). */
export function choiceOptions(choices: PipedriveChoices, kind: PipedriveChoiceKind): PipedriveOption[] {
  if (kind === 'users')
    return unique(
      choices.users.map((u) => ({
        id: u.id,
        name: u.name?.trim() || u.email || `User ${u.id}`,
        ...(u.email ? { more: u.email } : {}),
      })),
    );
  if (kind === 'pipelines')
    return unique(choices.pipelines.map((p) => ({ id: p.id, name: p.name?.trim() || `Pipeline ${p.id}` })));
  const pipelineName = new Map(choices.pipelines.map((p) => [p.id, p.name?.trim() || `Pipeline ${p.id}`]));
  const order = new Map(choices.pipelines.map((p, i) => [p.id, i]));
  const stages = choices.stages
    .filter((s) => s.pipeline_id === null || s.pipeline_id === undefined || pipelineName.has(s.pipeline_id))
    .sort(
      (a, b) =>
        (order.get(a.pipeline_id ?? -1) ?? 0) - (order.get(b.pipeline_id ?? -1) ?? 0) ||
        (a.order_nr ?? 0) - (b.order_nr ?? 0) ||
        a.id - b.id,
    );
  return unique(
    stages.map((s) => {
      const more = s.pipeline_id ? pipelineName.get(s.pipeline_id) : undefined;
      return { id: s.id, name: s.name?.trim() || `Stage ${s.id}`, ...(more ? { more } : {}) };
    }),
  );
}
