import { spawnSync } from 'node:child_process';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript of the tools/openapi-client workspace (its own TypeScript 5)
import { PROJECT, TSC, writeClientTypes } from '../../../../tools/openapi-client/generate.mjs';
import { createTestApp, type TestApp } from '../../test/test-app';

let t: TestApp;
type Media = { content?: Record<string, { schema?: unknown; example?: unknown }> };
type Operation = {
  operationId?: string;
  security?: unknown[];
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; deprecated?: boolean; schema: Record<string, unknown> }[];
  requestBody?: Media;
  responses: Record<string, Media>;
};
let doc: {
  paths: Record<string, Record<string, Operation>>;
  servers?: unknown[];
  components: { schemas: Record<string, { example?: unknown }> };
};

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  doc = (await t.app.inject('/api/docs/json')).json();
});
afterAll(async () => t?.close());

/** Operations whose success is not JSON: a file download, and a route that only ever fails. */
const WITHOUT_JSON_ANSWER = new Set([
  'get /rest/core-bases/{id}/sync-log-exports/{exportId}/download',
  'get /rest/debug/error',
]);

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

describe('the OpenAPI document as a contract', () => {
  it('names every operation once and answers its errors in the shared envelope', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const envelope = {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorEnvelope' },
        example: expect.any(Object),
      },
    };
    for (const { path, op } of operations()) {
      expect(op.responses['400']?.content, path).toEqual(envelope);
      expect(op.responses['500']?.content, path).toEqual(envelope);
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (path.startsWith('/rest/') && !isPublic)
        expect(op.responses['401']?.content, path).toEqual(envelope);
    }
    expect(doc.paths['/api/auth/token']?.get?.operationId).toBe('issueBearerToken');
    expect(doc.servers).toHaveLength(1);
    expect(JSON.stringify(doc)).not.toMatch(/\{"nullable":true\}/);
  });

  it('describes every operation, and says who may call it', () => {
    const missing = operations()
      .filter(({ op }) => !op.summary || !op.description || !/may call it/.test(op.description))
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
    expect(doc.paths['/rest/debug/error']?.get?.description).toMatch(/Only staff may call it/);
    expect(doc.paths['/health']?.get?.description).toMatch(/Anyone may call it/);
    expect(doc.paths['/rest/core-bases']?.post?.description).toMatch(/write scope/);
  });

  it('gives every JSON request body, 2xx and error answer an example that matches its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: 'doc' });
    const problems: string[] = [];
    const check = (where: string, pointer: string, media: Media | undefined) => {
      const json = media?.content?.['application/json'];
      if (!json) return;
      if (json.example === undefined) return problems.push(`${where}: no example`);
      const validate = ajv.compile({ $ref: `doc#${pointer}/content/application~1json/schema` });
      if (!validate(json.example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const { path, method, op } of operations()) {
      const at = `/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}`;
      check(`${method} ${path} request`, `${at}/requestBody`, op.requestBody);
      for (const status of Object.keys(op.responses))
        check(`${method} ${path} ${status}`, `${at}/responses/${status}`, op.responses[status]);
      const answers = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      if (!answers.some((s) => op.responses[s]?.content) && !WITHOUT_JSON_ANSWER.has(`${method} ${path}`))
        problems.push(`${method} ${path}: no 2xx body`);
    }
    expect(problems).toEqual([]);
    expect(doc.components.schemas.ErrorEnvelope?.example).toMatchObject({ statusCode: 404 });
  });

  it('gives ids, timestamps, dates, emails and URLs their format', () => {
    const expected: Record<string, string> = {
      createdAt: 'date-time',
      updatedAt: 'date-time',
      finishedAt: 'date-time',
      lastSyncTime: 'date-time',
      coreBaseId: 'uuid',
      tableMappingId: 'uuid',
      externalBaseId: 'uuid',
      externalConnectionId: 'uuid',
      syncLogId: 'uuid',
      trackingId: 'uuid',
    };
    const wrong: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      const properties = (node as { properties?: Record<string, { format?: string; type?: string }> })
        .properties;
      for (const [name, schema] of Object.entries(properties ?? {}))
        if (expected[name] && schema.type === 'string' && schema.format !== expected[name])
          wrong.push(`${where}.${name}: ${schema.format}`);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    };
    walk(doc.paths, '');
    expect(wrong).toEqual([]);
    const answer = (path: string, method = 'get') =>
      JSON.stringify(doc.paths[path]?.[method]?.responses['200']?.content?.['application/json']?.schema);
    expect(answer('/rest/sync-errors')).toMatch(/"id":\{"type":"string","format":"uuid"\}/);
    expect(answer('/rest/core-bases/{id}')).toMatch(/"id":\{"type":"string","format":"uuid"\}/);
    expect(answer('/rest/users/current')).toMatch(/"email":\{"type":"string","format":"email"\}/);
    expect(answer('/rest/core-bases/{id}/activity')).toMatch(/"day":\{"type":"string","format":"date"\}/);
    expect(answer('/rest/developer/webhooks')).toMatch(/"url":\{"type":"string","format":"uri"\}/);
  });

  it('documents the typed filters, the JSON form as deprecated', () => {
    for (const [path, typed, json] of [
      ['/rest/sync-errors', ['coreBaseId', 'status', 'code', 'side', 'search', 'tableMappingId'], 'filters'],
      [
        '/rest/sync-errors/by-cause',
        ['coreBaseId', 'status', 'code', 'side', 'search', 'tableMappingId'],
        'filters',
      ],
      ['/rest/core-bases', ['name', 'syncState', 'pinned'], 'filter'],
      ['/rest/sync-logs', ['coreBaseId', 'status', 'from', 'to'], undefined],
    ] as const) {
      const parameters = doc.paths[path]?.get?.parameters ?? [];
      const byName = new Map(parameters.map((p) => [p.name, p]));
      for (const name of typed) {
        expect(byName.get(name)?.in, `${path} ${name}`).toBe('query');
        expect(byName.get(name)?.deprecated, `${path} ${name}`).toBeUndefined();
      }
      if (json) expect(byName.get(json)?.deprecated, `${path} ${json}`).toBe(true);
    }
    const coreBaseId = doc.paths['/rest/sync-errors']?.get?.parameters?.find((p) => p.name === 'coreBaseId');
    expect(coreBaseId?.schema.format).toBe('uuid');
  });

  it('generates a typed client that a script using it typechecks against (openapi-typescript, openapi-fetch)', async () => {
    await writeClientTypes(doc);
    const check = spawnSync(TSC, ['-p', PROJECT], { encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
  }, 120_000);
});
