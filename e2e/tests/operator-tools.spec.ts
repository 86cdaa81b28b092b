import { expect, test } from '@playwright/test';
import { STAFF_EMAIL } from '../playwright.config';
import { setSkipPaywall, shot, signUp, signUpOrIn, sql, uniqueEmail } from './helpers';

test('staff see every job queue with the workers alive, and the stuck runs; a user cannot', async ({
  browser,
}) => {
  const staffPage = await (await browser.newContext()).newPage();
  await setSkipPaywall(staffPage, false);
  await signUpOrIn(staffPage, STAFF_EMAIL, 'Stella Staff');
  await staffPage.goto('/settings');
  await staffPage.getByRole('link', { name: /Job queues/ }).click();
  await expect(staffPage).toHaveURL(/\/settings\/all-queues$/);
  await expect(staffPage.getByText(/\d+ workers? alive/)).toBeVisible();
  await expect(staffPage.getByTestId('queue-sync-run')).toBeVisible();
  await expect(staffPage.getByTestId('queue-drift-check')).toBeVisible();
  await shot(staffPage, '40-all-queues');
  await staffPage.goto('/stuck-syncs');
  await expect(staffPage.getByText('No run is stuck.')).toBeVisible();
  await shot(staffPage, '41-stuck-syncs');
  // The spec's own paths for the staff pages.
  await staffPage.goto('/flags');
  await expect(staffPage.getByLabel('Find a user')).toBeVisible();
  await staffPage.goto('/users');
  await expect(staffPage.getByPlaceholder('Search by email or name')).toBeVisible();

  const userPage = await (await browser.newContext()).newPage();
  await setSkipPaywall(userPage, true);
  await signUp(userPage, uniqueEmail('not-staff'), 'Nat User');
  await userPage.goto('/settings/all-queues');
  await expect(userPage.getByTestId('queue-sync-run')).toHaveCount(0);
});

test("the job viewer shows one sync's jobs to its owner and to staff, with a job's error", async ({
  browser,
}) => {
  const email = uniqueEmail('jobs-owner');
  const userPage = await (await browser.newContext()).newPage();
  await setSkipPaywall(userPage, true);
  await signUp(userPage, email, 'Jo Owner');
  // A sync of the user's with one connected app, and two of its jobs as the queue keeps them: a run
  // waiting for later, and a webhook refresh that failed with its error.
  const [user] = await sql<{ id: string }>('lockstep', 'select id from "user" where email = $1', [email]);
  const [sync] = await sql<{ id: string }>(
    'lockstep',
    "insert into core_base (owner_id, name, config_extras) values ($1, 'Jobs sync', '{}') returning id",
    [user?.id],
  );
  const [app] = await sql<{ id: string }>(
    'lockstep',
    `insert into external_base (owner_id, core_base_id, type, name, remote_id, side, extras)
     values ($1, $2, 'postgresql', 'CRM', 'public', 'left', '{}') returning id`,
    [user?.id, sync?.id],
  );
  await sql(
    'lockstep',
    `insert into pgboss.job (name, data, singleton_key, start_after)
     values ('sync-run', jsonb_build_object('coreBaseId', $1::text, 'trigger', 'e2e'), $1, now() + interval '1 day')`,
    [sync?.id],
  );
  await sql(
    'lockstep',
    `insert into pgboss.job (name, data, state, retry_limit, retry_count, created_on, started_on, completed_on,
       output)
     values ('refresh-app-webhooks', jsonb_build_object('coreBaseId', $1::text), 'failed', 0, 0,
       now() - interval '4 seconds', now() - interval '3 seconds', now(), '{"message": "The app refused the webhook"}')`,
    [sync?.id],
  );

  await userPage.goto(`/job-viewer?externalBaseId=${app?.id}`);
  await expect(userPage.getByRole('heading', { name: 'Job viewer' })).toBeVisible();
  await expect(userPage.getByRole('row').filter({ hasText: 'sync-run' })).toContainText('Waiting');
  const failed = userPage.getByRole('row').filter({ hasText: 'refresh-app-webhooks' });
  await expect(failed).toContainText('Failed');
  await expect(userPage.getByLabel('Job durations')).toContainText('refresh-app-webhooks');
  await failed.getByRole('button', { name: 'Details' }).click();
  await expect(userPage.getByLabel('Error')).toContainText('The app refused the webhook');
  await shot(userPage, '42-job-viewer');
  await userPage.keyboard.press('Escape');
  await userPage.getByText('Failed (1)').click();
  await expect(userPage).toHaveURL(/state=failed/);
  await expect(userPage.getByRole('row').filter({ hasText: 'sync-run' })).toHaveCount(0);

  // Staff see the same sync's jobs; another user is told the app is not found.
  const staffPage = await (await browser.newContext()).newPage();
  await signUpOrIn(staffPage, STAFF_EMAIL, 'Stella Staff');
  await staffPage.goto(`/job-viewer?externalBaseId=${app?.id}`);
  await expect(staffPage.getByRole('row').filter({ hasText: 'refresh-app-webhooks' })).toBeVisible();
  const otherPage = await (await browser.newContext()).newPage();
  await setSkipPaywall(otherPage, true);
  await signUp(otherPage, uniqueEmail('jobs-other'), 'Olly Other');
  await otherPage.goto(`/job-viewer?externalBaseId=${app?.id}`);
  await expect(otherPage.getByText('Could not load the jobs')).toBeVisible();
});
