import { setPublicHostsOnly } from '@lockstep/connectors';
import { createAuth, migrateAuth } from './auth/auth';
import { emailVerificationMode, optedOutWarning } from './auth/email-verification';
import { createMailer, type Mailer } from './auth/mailer';
import { createBearerVerifier } from './auth/verify-bearer';
import type { Config } from './config';
import { createConnectorRegistry } from './connectors/connector-registry';
import { createDb, createPool, ensureDatabase, migrateToLatest } from './db/database';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './db/embedded-postgres';
import { ensureDemoDatabases } from './demo/demo-databases';
import { resolveEmbeddedItems } from './demo/embedded-items';
import { createPostgresAuthRateLimiter } from './http/auth-rate-limit';
import type { AppContext } from './http/context';
import { registerJobs } from './jobs/index';
import { startQueue } from './jobs/queue';
import { SYNC_RUN, takeOverRun } from './jobs/sync-run';
import { startWorkerLiveness } from './jobs/worker-liveness';
import { type SandboxApps, startSandboxApps } from './sandbox/sandbox-apps';
import { loadSecrets } from './secrets';
import { blendedRuntimeFactory, withBlendedPort } from './services/blended-tables/port';
import { createSecretBox } from './services/secret-box';
import { ensureProfile, grantStaff } from './services/users';
import { createPostgresChangeListener } from './sync/postgres-change-listener';
import { createSyncRunner } from './sync/run-sync-chunk';
import { createRuntimeConnectors } from './sync/runtime-connectors';

export type Booted = {
  ctx: AppContext;
  databaseUrl: string;
  embedded: EmbeddedDatabase | null;
  close: () => Promise<void>;
};

/**
 * Everything a process of any role needs: the database (embedded unless DATABASE_URL is set),
 * migrations, secrets, auth. Safe to run in several processes at once (migrations take a lock).
 */
export async function boot(
  config: Config,
  log: (line: string) => void = console.log,
  options: { runWorkers?: boolean } = {},
): Promise<Booted> {
  // Refused before anything starts: a public server without mail settings (and no explicit opt-out).
  const verification = emailVerificationMode(config);
  const optedOut = optedOutWarning(verification);
  if (optedOut) log(optedOut);
  let embedded: EmbeddedDatabase | null = null;
  let sandbox: SandboxApps | null = null;
  let mailer: Mailer | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    if (config.role !== 'all') {
      throw new Error(
        `--role=${config.role} needs DATABASE_URL: separate api and worker processes must share a PostgreSQL server.`,
      );
    }
    // wal_level=logical: the demo databases can try logical decoding as well as triggers.
    embedded = await startEmbeddedPostgres(config.dataDir, log, {
      wal_level: 'logical',
      ...(config.embeddedStatementStats
        ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' }
        : {}),
    });
    await ensureDatabase(embedded.url(), 'lockstep');
    await ensureDemoDatabases(embedded.url);
    databaseUrl = embedded.url('lockstep');
  }
  try {
    const secrets = await loadSecrets(config, log);
    const pool = createPool(databaseUrl);
    const db = createDb(pool);
    mailer = verification.required ? createMailer(verification) : null;
    const auth = createAuth({
      pool,
      config,
      secret: secrets.authSecret,
      hooks: { onUserCreated: (user) => ensureProfile(db, user) },
      mailer,
    });
    await migrateAuth(auth);
    await migrateToLatest(db);
    for (const email of config.staffEmails) await grantStaff(db, email);
    // Every role sends jobs; only worker processes (worker, all) run them.
    const boss = await startQueue(databaseUrl, { log: (line) => log(line) });
    // Sandbox apps run inside the one process of the embedded default (or when asked for).
    // Outside local and test mode only when asked for: a public server offers no sandboxes by itself.
    const localMode = config.environment === 'local' || config.environment === 'test';
    if ((config.sandbox ?? (embedded !== null && localMode)) && config.role === 'all')
      sandbox = await startSandboxApps({
        log,
        // Sandbox connections sign in with this server's OAuth clients, as real ones do.
        oauth: {
          ...(config.notion.clientId && config.notion.clientSecret
            ? { notion: { clientId: config.notion.clientId, clientSecret: config.notion.clientSecret } }
            : {}),
          ...(config.google.clientId && config.google.clientSecret
            ? { google: { clientId: config.google.clientId, clientSecret: config.google.clientSecret } }
            : {}),
        },
      });
    else if (config.sandbox) log('LOCKSTEP_SANDBOX needs --role=all: its simulators live in one process.');
    const allowPrivateHosts = config.environment === 'local' || config.environment === 'test';
    setPublicHostsOnly(!allowPrivateHosts);
    const sandboxUrls = () => sandbox?.urls() ?? [];
    const airtable = {
      apiUrl: config.airtable.apiUrl,
      oauthUrl: config.airtable.oauthUrl,
      clientId: config.airtable.clientId,
      clientSecret: config.airtable.clientSecret,
      sandboxUrls,
      allowCustomBaseUrl: allowPrivateHosts,
    };
    // Notion and Google Sheets: the apps' own APIs, or the sandbox's simulators (any URL when local).
    const saas = { sandboxUrls, allowCustomBaseUrl: allowPrivateHosts };
    const notion = {
      ...saas,
      clientId: config.notion.clientId,
      clientSecret: config.notion.clientSecret,
      ...(config.notion.apiUrl ? { apiUrl: config.notion.apiUrl } : {}),
    };
    const g = config.google.apiUrl;
    const googleSheets = {
      ...saas,
      clientId: config.google.clientId,
      clientSecret: config.google.clientSecret,
      ...(g ? { apiUrl: g, driveUrl: g, oauthUrl: g, authorizeUrl: g } : {}),
    };
    // Read from ctx at each use: tests point a booted app's embedded databases elsewhere.
    const resolveItems = (items: Record<string, string>) =>
      resolveEmbeddedItems(items, ctx.embeddedDatabaseUrl);
    const hubspot = { ...saas, ...config.hubspot };
    const attio = { ...saas, ...config.attio };
    const pipedrive = { ...saas, ...config.pipedrive };
    const affinity = { ...saas, apiUrl: config.affinity.apiUrl };
    const salesforce = { ...saas, ...config.salesforce };
    const stripe = { ...saas, ...config.stripe };
    const memberstack = {
      ...saas,
      apiUrl: config.memberstack.apiUrl,
      emailStableMs: config.memberstack.emailStableMs,
    };
    const webflow = { ...saas, ...config.webflow };
    const runtimeConnectors = createRuntimeConnectors(
      {},
      {
        resolveItems,
        supabase: { rootCa: config.supabase.rootCa },
        airtable: { ...airtable, pool },
        hubspot: { ...hubspot, pool },
        attio: { ...attio, pool },
        pipedrive: { ...pipedrive, pool },
        affinity: { ...affinity, pool },
        salesforce: { ...salesforce, pool },
        stripe: { ...stripe, pool },
        memberstack: { ...memberstack, pool },
        webflow: { ...webflow, pool },
        notion: { ...notion, pool },
        googleSheets: { ...googleSheets, pool },
      },
    );
    const secretBox = createSecretBox(secrets.secretKey);
    // Blended tables: a virtual connector over the user's own connections' connectors.
    runtimeConnectors.register(
      'blended',
      blendedRuntimeFactory({ db, secretBox, connectors: runtimeConnectors }),
    );
    const ctx: AppContext = {
      boss,
      config,
      pool,
      db,
      auth,
      verifyBearer: createBearerVerifier(auth),
      authRateLimiter: createPostgresAuthRateLimiter(config.authRateLimit, pool),
      intercomSecret: secrets.intercomSecret,
      secretBox,
      runtimeConnectors,
      embeddedDatabaseUrl: embedded ? (database: string) => embedded.url(database) : null,
      // The REST side (schemas, previews, samples) spends the same per-base budget as the runs: the
      // same PostgreSQL store, or together they exceed the app's limit (Airtable then locks out 30 s).
      connectors: createConnectorRegistry({
        allowPrivateHosts,
        resolveItems,
        postgresTimeouts: config.postgresTimeouts,
        supabase: config.supabase,
        airtable: { ...airtable, pool },
        hubspot: { ...hubspot, pool },
        attio: { ...attio, pool },
        pipedrive: { ...pipedrive, pool },
        affinity: { ...affinity, pool },
        salesforce: { ...salesforce, pool },
        stripe: { ...stripe, pool },
        memberstack: { ...memberstack, pool },
        webflow: { ...webflow, pool },
        notion: { ...notion, pool },
        googleSheets: { ...googleSheets, pool },
      }),
      sandbox,
    };
    ctx.connectors = withBlendedPort(ctx.connectors, db);
    // Worker processes hold a liveness lock, so a dead one's runs are taken over in seconds.
    const liveness =
      (options.runWorkers ?? config.role !== 'api')
        ? await startWorkerLiveness({
            db,
            boss,
            databaseUrl,
            queue: SYNC_RUN,
            takeOver: (jobId, coreBaseId) => takeOverRun(boss, jobId, coreBaseId),
            log,
          })
        : undefined;
    await registerJobs(boss, {
      db,
      liveness,
      runWorkers: options.runWorkers ?? config.role !== 'api',
      runner: createSyncRunner({
        db,
        secretBox,
        connectors: runtimeConnectors,
        localDevPlan: config.environment === 'local',
      }),
      secretBox,
      connectors: runtimeConnectors,
      ctx,
    });
    const runWorkers = options.runWorkers ?? config.role !== 'api';
    const changeListener = createPostgresChangeListener({
      db,
      boss,
      secretBox,
      lockstepDatabaseUrl: databaseUrl,
      resolveItems,
      log,
    });
    if (runWorkers) await changeListener.start();
    return {
      ctx,
      databaseUrl,
      embedded,
      close: async () => {
        await liveness?.stop();
        await changeListener.stop();
        await boss.stop({ graceful: true, timeout: 10_000 });
        await runtimeConnectors.close();
        await sandbox?.close();
        mailer?.close();
        await db.destroy();
        await embedded?.stop();
      },
    };
  } catch (error) {
    mailer?.close();
    await sandbox?.close();
    await embedded?.stop();
    throw error;
  }
}
