import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript of the tools/openapi-client workspace (its own TypeScript 5)
import { PROJECT, TSC, writeClientTypes } from '../../../../tools/openapi-client/generate.mjs';
import { createTestApp, type TestApp } from '../../test/test-app';

let t: TestApp;
type Operation = {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { content?: unknown }>;
};
let doc: { paths: Record<string, Record<string, Operation>>; servers?: unknown[] };

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  doc = (await t.app.inject('/api/docs/json')).json();
});
afterAll(async () => t?.close());

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

describe('the OpenAPI document as a contract', () => {
  it('names every operation once and answers its errors in the shared envelope', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const envelope = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } };
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

  it('generates a typed client that a script using it typechecks against (openapi-typescript, openapi-fetch)', async () => {
    await writeClientTypes(doc);
    const check = spawnSync(TSC, ['-p', PROJECT], { encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
  }, 120_000);
});
