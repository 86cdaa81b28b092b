import { boot } from './boot';
import { loadConfig } from './config';
import { buildApp } from './http/app';

/** `npm start`: one process running the API, the job workers, or both (--role=api|worker|all). */
async function main() {
  const started = Date.now();
  const config = loadConfig();
  const booted = await boot(config);
  const { ctx } = booted;
  const app = config.role === 'worker' ? null : await buildApp(ctx);
  if (app) await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping Lockstep...`);
    await app?.close();
    await booted.close();
    console.log('Stopped cleanly.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const where = booted.embedded ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (app)
    console.log(
      `\nLockstep is running at ${config.publicUrl} (role ${config.role}, ${where}, ready in ${seconds} s)`,
    );
  else console.log(`\nLockstep worker is running (${where}, ready in ${seconds} s)`);
}

main().catch((error: unknown) => {
  console.error(`\nLockstep could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
