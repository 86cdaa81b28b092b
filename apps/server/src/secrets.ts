import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config';

/** A secret from the environment, or generated once and kept in the data dir (embedded default). */
async function secretFromFile(dataDir: string, name: string): Promise<string> {
  const file = path.join(dataDir, name);
  if (!existsSync(file)) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return (await readFile(file, 'utf8')).trim();
}

export type Secrets = { authSecret: string; secretKey: string; intercomSecret: string };

export async function loadSecrets(config: Config, warn: (line: string) => void): Promise<Secrets> {
  const fromFiles = !config.authSecret || !config.secretKey;
  if (fromFiles && config.databaseUrl && config.environment === 'production') {
    throw new Error(
      'Set BETTER_AUTH_SECRET and LOCKSTEP_SECRET_KEY in production: every process must share the same secrets.',
    );
  }
  if (fromFiles && config.databaseUrl) {
    warn(
      `Secrets not set in the environment: using generated ones in ${config.dataDir} (fine for one machine).`,
    );
  }
  const authSecret = config.authSecret ?? (await secretFromFile(config.dataDir, 'auth-secret'));
  const secretKey = config.secretKey ?? (await secretFromFile(config.dataDir, 'secret.key'));
  return { authSecret, secretKey, intercomSecret: config.intercomSecret ?? authSecret };
}
