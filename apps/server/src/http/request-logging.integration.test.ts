import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/test-app';
import { buildApp } from './app';

// Requests are logged one line each at debug only: at the default level (info) a busy server wrote
// about 550 bytes a request. A request that fails on our side is still a warning.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
});
afterAll(async () => t.close());

async function appLoggingAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const app = await buildApp(
    { ...t.ctx, config: { ...t.ctx.config, logLevel: level } },
    { logStream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
  );
  app.get('/api/test-boom', async () => {
    throw new Error('boom');
  });
  await app.ready();
  return { app, lines };
}

describe('request logging', () => {
  it('logs nothing for a successful request at info, and a warning and the error for a 5xx', async () => {
    const { app, lines } = await appLoggingAt('info');
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/api/hello' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/rest/core-bases' })).statusCode).toBe(401);
    expect(lines).toEqual([]);

    expect((await app.inject({ url: '/api/test-boom' })).statusCode).toBe(500);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'unexpected error'],
      [40, 'request failed'],
    ]);
    expect(lines[1]).toMatchObject({ method: 'GET', url: '/api/test-boom', statusCode: 500 });
    await app.close();
  });

  it('logs one short line a request at debug', async () => {
    const { app, lines } = await appLoggingAt('debug');
    await app.inject({ url: '/api/hello?x=1' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 20, msg: 'request', method: 'GET', url: '/api/hello?x=1' });
    expect(lines[0]?.statusCode).toBe(200);
    expect(typeof lines[0]?.ms).toBe('number');
    await app.close();
  });
});
