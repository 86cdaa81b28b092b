/**
 * Contract test for schema creation: Notion's own SDK (@notionhq/client, pinned, default
 * Notion-Version 2025-09-03) creating a data source in a database (dataSources.create, the
 * 2025-09-03 form of databases.create for a database that exists) and adding properties to it
 * (dataSources.update), with the refusals Notion documents.
 */
import { APIErrorCode, APIResponseError, Client, isFullDataSource, LogLevel } from '@notionhq/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NotionSimulator, startNotionSimulator } from './index.ts';

let sim: NotionSimulator;
let notion: Client;
beforeAll(async () => {
  sim = await startNotionSimulator({ seed: { people: 1 }, rateLimit: false });
  notion = new Client({ auth: sim.token, baseUrl: sim.url, logLevel: LogLevel.ERROR });
});
afterAll(async () => sim?.close());

async function refusal(p: Promise<unknown>): Promise<APIResponseError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIResponseError);
  return error as APIResponseError;
}

describe('data sources made and extended through @notionhq/client', () => {
  it('dataSources.create makes a data source in the database, typed as asked', async () => {
    const databaseId = sim.workspace?.companiesDatabaseId as string;
    const ds = await notion.dataSources.create({
      parent: { type: 'database_id', database_id: databaseId },
      title: [{ type: 'text', text: { content: 'Deals' } }],
      properties: {
        Deal: { title: {} },
        Amount: { number: { format: 'euro' } },
        Stage: { select: { options: [{ name: 'Open' }, { name: 'Won', color: 'green' }] } },
        Closed: { checkbox: {} },
        Due: { date: {} },
        Contact: { email: {} },
      },
    });
    expect(isFullDataSource(ds)).toBe(true);
    if (!isFullDataSource(ds)) return;
    expect(ds.title.map((t) => t.plain_text).join('')).toBe('Deals');
    expect(ds.properties.Deal?.type).toBe('title');
    expect(ds.properties.Amount).toMatchObject({ type: 'number', number: { format: 'euro' } });
    expect(ds.properties.Stage?.type).toBe('select');
    const stage = ds.properties.Stage as { select: { options: { name: string; color: string }[] } };
    expect(stage.select.options.map((o) => [o.name, o.color])).toEqual([
      ['Open', expect.any(String)],
      ['Won', 'green'],
    ]);
    // The database lists it, and the integration can read it.
    const db = await notion.databases.retrieve({ database_id: databaseId });
    expect('data_sources' in db && db.data_sources.map((d) => d.id)).toContain(ds.id);
    expect((await notion.dataSources.retrieve({ data_source_id: ds.id })).id).toBe(ds.id);

    const updated = await notion.dataSources.update({
      data_source_id: ds.id,
      properties: { Notes: { rich_text: {} }, Tags: { multi_select: { options: [{ name: 'vip' }] } } },
    });
    expect(isFullDataSource(updated) && Object.keys(updated.properties)).toEqual(
      expect.arrayContaining(['Deal', 'Amount', 'Notes', 'Tags']),
    );
  });

  it('refuses a schema without a title, a second title, and option names with commas', async () => {
    const parent = {
      type: 'database_id' as const,
      database_id: sim.workspace?.companiesDatabaseId as string,
    };
    const noTitle = await refusal(
      notion.dataSources.create({ parent, properties: { Amount: { number: {} } } }),
    );
    expect([noTitle.status, noTitle.code]).toEqual([400, APIErrorCode.ValidationError]);
    const comma = await refusal(
      notion.dataSources.create({
        parent,
        properties: { Name: { title: {} }, Stage: { select: { options: [{ name: 'Won, finally' }] } } },
      }),
    );
    expect([comma.status, comma.code]).toEqual([400, APIErrorCode.ValidationError]);
    const ds = await notion.dataSources.create({ parent, properties: { Name: { title: {} } } });
    const second = await refusal(
      notion.dataSources.update({ data_source_id: ds.id, properties: { Other: { title: {} } } }),
    );
    expect([second.status, second.code]).toEqual([400, APIErrorCode.ValidationError]);
  });
});
