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
  // Outside local and test mode generated secrets are refused: a server that is reached by others
  // must have secrets chosen and kept by its operator (and shared by all its processes), not files
  // beside a data dir that a redeploy may lose, signing everyone out and leaving the stored
  // connection secrets unreadable.
  if (fromFiles && (config.environment === 'production' || config.environment === 'staging')) {
    throw new Error(
      `Set BETTER_AUTH_SECRET and LOCKSTEP_SECRET_KEY (each: openssl rand -base64 32) when LOCKSTEP_ENV is ${config.environment}: every process must share the same secrets, kept outside the server.`,
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
