import { PLAN_TIER_NAMES, tierOfProductType } from '@lockstep/contract';
import { sql } from 'kysely';
import { loadConfig } from './config';
import { createDb, createPool } from './db/database';
import { runningEmbeddedUrl } from './db/embedded-postgres';
import { assignPlan } from './services/subscriptions';
import { grantStaff } from './services/users';

const USAGE = `Lockstep CLI (npm run cli -- <command>)
  staff grant <email>                 give a user the staff role
  staff revoke <email>                take it away
  plan assign <email> <tier> [days]   give a user a plan (tiers: ${PLAN_TIER_NAMES.join(', ')})

Uses DATABASE_URL, or the embedded PostgreSQL of a Lockstep running on LOCKSTEP_DATA_DIR.`;

async function main(args: string[]) {
  const [area, verb, email, tier, days] = args;
  if (!area || !verb || !email) return fail(USAGE);
  const config = loadConfig(process.env, ['node', 'cli', '--role=all']);
  const url = config.databaseUrl ?? (await runningEmbeddedUrl(config.dataDir));
  if (!url) return fail(`No database: start Lockstep first (npm start), or set DATABASE_URL.`);
  const db = createDb(createPool(url, 2));
  try {
    if (area === 'staff' && (verb === 'grant' || verb === 'revoke')) {
      const found = await grantStaff(db, email, verb === 'grant');
      if (!found) return fail(`No user with the email ${email}. They must sign up first.`);
      console.log(`${email} is ${verb === 'grant' ? 'now staff' : 'no longer staff'}.`);
      return;
    }
    if (area === 'plan' && verb === 'assign' && tier) {
      if (!tierOfProductType(tier))
        return fail(`"${tier}" is not a plan. Tiers: ${PLAN_TIER_NAMES.join(', ')}.`);
      const user = await db
        .selectFrom('user')
        .select('id')
        .where(sql`lower(email)`, '=', email.toLowerCase())
        .executeTakeFirst();
      if (!user) return fail(`No user with the email ${email}.`);
      const dayCount = days ? Number.parseInt(days, 10) : null;
      if (dayCount !== null && (!Number.isInteger(dayCount) || dayCount < 1))
        return fail('days must be a positive whole number.');
      await assignPlan(db, user.id, tier.toLowerCase(), { days: dayCount, status: 'active' });
      console.log(`${email} now has the ${tier} plan${dayCount ? ` for ${dayCount} days` : ''}.`);
      return;
    }
    return fail(USAGE);
  } finally {
    await db.destroy();
  }
}

function fail(message: string) {
  console.error(message);
  process.exitCode = 1;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  fail(`Failed: ${error instanceof Error ? error.message : String(error)}`);
});
