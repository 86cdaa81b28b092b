import { expect, test } from '@playwright/test';
import { STAFF_EMAIL } from '../playwright.config';
import { setSkipPaywall, shot, signUp, uniqueEmail } from './helpers';

test('a new user signs up, meets the plan gate, passes it in dev mode, signs out and in again', async ({
  browser,
}) => {
  const email = uniqueEmail('ada');
  const password = 'correct-horse-42';

  // Dev mode off: a user without a plan meets the gate.
  const strict = await browser.newContext();
  const page = await strict.newPage();
  await setSkipPaywall(page, false);
  await page.goto('/syncs');
  await expect(page).toHaveURL(/\/sign-in\?redirect_url=%2Fsyncs/);
  await shot(page, '01-sign-in-redirect');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await expect(page).toHaveURL(/\/sign-up\?redirect_url=/);
  await shot(page, '02-sign-up');
  await signUp(page, email, 'Ada Lovelace', password);

  const gate = page.getByRole('dialog', { name: 'Choose a plan to get started' });
  await expect(gate).toBeVisible();
  await shot(page, '03-plan-gate');
  // It cannot be dismissed.
  await page.keyboard.press('Escape');
  await page.mouse.click(5, 400);
  await expect(gate).toBeVisible();
  await expect(gate.getByRole('link', { name: 'Choose Plan' })).toHaveAttribute('href', /pricing/);
  await expect(gate.getByRole('button', { name: 'Switch Accounts' })).toBeVisible();
  // Gated on the other plan routes too, but not on settings.
  await page.goto('/issues');
  await expect(page.getByRole('dialog', { name: 'Choose a plan to get started' })).toBeVisible();
  await page.goto('/settings');
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await strict.close();

  // Dev mode on: the same user passes the gate with the dev plan and reaches the empty syncs area.
  const dev = await browser.newContext();
  const devPage = await dev.newPage();
  await setSkipPaywall(devPage, true);
  await devPage.goto('/sign-in');
  await devPage.getByLabel('Email').fill(email);
  await devPage.getByRole('textbox', { name: 'Password' }).fill(password);
  await devPage.getByRole('button', { name: 'Sign in' }).click();
  await expect(devPage).toHaveURL(/\/syncs$/);
  await expect(devPage.getByRole('heading', { name: 'No syncs yet' })).toBeVisible();
  await expect(devPage.getByRole('dialog')).toHaveCount(0);
  await expect(devPage.getByText('Dev Plan')).toBeVisible();
  await shot(devPage, '04-syncs-empty-dev-plan');
  await devPage.goto('/subscription/manage');
  await expect(devPage.getByText('30 days remaining (local dev plan)')).toBeVisible();
  await shot(devPage, '05-subscription');
  await devPage.goto('/get-started');
  await shot(devPage, '06-get-started');

  // Sign out goes to /sign-in; signing in again comes back.
  await devPage.getByRole('button', { name: 'Account menu' }).click();
  await devPage.getByRole('menuitem', { name: 'Sign out' }).click();
  await expect(devPage).toHaveURL(/\/sign-in$/);
  await devPage.goto('/settings/profile');
  await expect(devPage).toHaveURL(/\/sign-in\?redirect_url=%2Fsettings%2Fprofile/);
  await devPage.getByLabel('Email').fill(email);
  await devPage.getByRole('textbox', { name: 'Password' }).fill(password);
  await devPage.getByRole('button', { name: 'Sign in' }).click();
  await expect(devPage).toHaveURL(/\/settings\/profile$/);
  await expect(devPage.getByRole('cell', { name: email })).toBeVisible();
  await shot(devPage, '07-profile');
  await dev.close();
});

test('a wrong password is refused with a clear message', async ({ page }) => {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(uniqueEmail('nobody'));
  await page.getByRole('textbox', { name: 'Password' }).fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText(/invalid/i);
  await shot(page, '08-sign-in-error');
});

test('choosing a plan starts a trial and lifts the gate', async ({ page }) => {
  await setSkipPaywall(page, false);
  await signUp(page, uniqueEmail('planner'), 'Grace Hopper');
  await expect(page.getByRole('dialog', { name: 'Choose a plan to get started' })).toBeVisible();
  await page.goto('/account/signup/pro');
  await shot(page, '09-plan-chooser');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await expect(page).toHaveURL(/\/syncs$/);
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(page.getByText('Pro', { exact: true })).toBeVisible();
  await page.goto('/subscription/manage');
  await expect(page.getByText('14 days remaining')).toBeVisible();
  await expect(page.getByText('0 of 15')).toBeVisible();
});

test('staff force an error and see the envelope text; unknown routes show the not-found view', async ({
  page,
}) => {
  await setSkipPaywall(page, true);
  await signUp(page, STAFF_EMAIL, 'Stella Staff');
  await page.goto('/settings/dev-tools');
  await page.getByRole('button', { name: 'Force an error' }).click();
  await expect(page.getByText('Something went wrong on our side.')).toBeVisible();
  await page.waitForTimeout(500); // let the notification finish sliding in for the screenshot
  await shot(page, '10-forced-error-notification');
  await page.goto('/settings/users');
  await expect(page.getByRole('cell', { name: STAFF_EMAIL })).toBeVisible();
  await shot(page, '11-staff-users');
  await page.goto('/no/such/page');
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await shot(page, '12-not-found');
});
