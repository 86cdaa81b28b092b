import { type Kysely, sql } from 'kysely';

// Payments through Stripe: a subscription row may be backed by a Stripe subscription (one row per
// Stripe subscription), carries the user's Stripe customer, the period Stripe bills for, whether it
// ends at that period's end, and since when a payment is overdue (past_due, usable for a grace
// period). 'incomplete' rows only keep a customer made before any plan (checkout begun); they grant
// nothing. Stripe event ids are taken once (stripe_webhook_event).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table subscription drop constraint if exists subscription_status_check`.execute(db);
  await sql`alter table subscription add constraint subscription_status_check
    check (status in ('active', 'trialing', 'past_due', 'canceled', 'incomplete'))`.execute(db);
  await sql`alter table subscription
    add column if not exists stripe_customer_id text,
    add column if not exists stripe_subscription_id text,
    add column if not exists current_period_end timestamptz,
    add column if not exists cancel_at_period_end boolean not null default false,
    add column if not exists past_due_since timestamptz,
    add column if not exists updated_at timestamptz not null default now()`.execute(db);
  await sql`create unique index if not exists subscription_stripe_subscription_idx
    on subscription (stripe_subscription_id) where stripe_subscription_id is not null`.execute(db);
  await sql`create index if not exists subscription_stripe_customer_idx
    on subscription (stripe_customer_id) where stripe_customer_id is not null`.execute(db);
  await sql`create table if not exists stripe_webhook_event (
    event_id text primary key,
    type text not null,
    received_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index if not exists stripe_webhook_event_received_idx
    on stripe_webhook_event (received_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists stripe_webhook_event`.execute(db);
  await sql`drop index if exists subscription_stripe_customer_idx`.execute(db);
  await sql`drop index if exists subscription_stripe_subscription_idx`.execute(db);
  await sql`delete from subscription where status in ('past_due', 'incomplete')`.execute(db);
  await sql`alter table subscription
    drop column if exists stripe_customer_id,
    drop column if exists stripe_subscription_id,
    drop column if exists current_period_end,
    drop column if exists cancel_at_period_end,
    drop column if exists past_due_since,
    drop column if exists updated_at`.execute(db);
  await sql`alter table subscription drop constraint if exists subscription_status_check`.execute(db);
  await sql`alter table subscription add constraint subscription_status_check
    check (status in ('active', 'trialing', 'canceled'))`.execute(db);
}
