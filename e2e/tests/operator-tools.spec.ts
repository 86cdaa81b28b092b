import { expect, test } from '@playwright/test';
import { STAFF_EMAIL } from '../playwright.config';
import { setSkipPaywall, shot, signUp, signUpOrIn, uniqueEmail } from './helpers';

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

  const userPage = await (await browser.newContext()).newPage();
  await setSkipPaywall(userPage, true);
  await signUp(userPage, uniqueEmail('not-staff'), 'Nat User');
  await userPage.goto('/settings/all-queues');
  await expect(userPage.getByTestId('queue-sync-run')).toHaveCount(0);
});
