import { mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { loadSecrets } from './secrets';

const config = async (env: Record<string, string>) =>
  loadConfig({ LOCKSTEP_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'lockstep-secrets-')), ...env }, [
    'node',
    'server',
  ]);
const key = Buffer.alloc(32, 7).toString('base64');

describe('secrets at start-up', () => {
  it('refuses to start outside local mode without both secrets set, database server or not', async () => {
    for (const LOCKSTEP_ENV of ['production', 'staging']) {
      const partial: Record<string, string>[] = [
        {},
        { DATABASE_URL: 'postgres://db/x' },
        { BETTER_AUTH_SECRET: key },
      ];
      for (const env of partial) {
        await expect(loadSecrets(await config({ LOCKSTEP_ENV, ...env }), () => {})).rejects.toThrow(
          /Set BETTER_AUTH_SECRET and LOCKSTEP_SECRET_KEY/,
        );
      }
      const set = await config({ LOCKSTEP_ENV, BETTER_AUTH_SECRET: key, LOCKSTEP_SECRET_KEY: key });
      expect(await loadSecrets(set, () => {})).toMatchObject({ authSecret: key, secretKey: key });
      expect(await readdir(set.dataDir).catch(() => [])).toEqual([]);
    }
  });

  it('generates and keeps them in the data dir on a local server', async () => {
    const local = await config({});
    const first = await loadSecrets(local, () => {});
    expect(first.secretKey).toHaveLength(44);
    expect(await loadSecrets(local, () => {})).toEqual(first);
  });
});
