import { expect, test } from '@playwright/test';
import { STAFF_EMAIL } from '../playwright.config';
import { setSkipPaywall, shot, signUp, signUpOrIn, uniqueEmail } from './helpers';

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
  await expect(devPage.getByRole('link', { name: 'Create a sync' })).toHaveAttribute('href', '/syncs/new');
  await shot(devPage, '06-get-started');
  await devPage.getByRole('link', { name: 'Issues' }).click();
  await expect(devPage.getByRole('heading', { name: 'No issues' })).toBeVisible();
  await shot(devPage, '06b-issues-empty');
  // A slow route change shows the thin progress bar at the top, then hides it.
  await devPage.route(/operations-page-.*\.js$/, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await route.continue();
  });
  await devPage.getByRole('link', { name: 'Operations' }).click();
  const bar = devPage.getByRole('progressbar', { name: 'Loading page' });
  await expect(bar).toBeVisible();
  await shot(devPage, '06c-route-progress');
  await expect(devPage.getByRole('heading', { name: 'No operations yet' })).toBeVisible();
  await expect(bar).toHaveCount(0);
  await shot(devPage, '06d-operations-empty');

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
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeEnabled();
  await page.waitForTimeout(300); // the button's loader fades out
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
  await expect(page.getByText('0 of 15', { exact: true })).toBeVisible();
});

test('staff force an error and see the envelope text; a broken page shows the error screen', async ({
  page,
}) => {
  await setSkipPaywall(page, true);
  await signUp(page, STAFF_EMAIL, 'Stella Staff');
  await page.goto('/settings/dev-tools');
  await page.getByRole('button', { name: 'Force an error' }).click();
  // The server's 500 envelope carries this user-facing message; the notification shows it as it is.
  const notification = page.locator('.mantine-Notification-root');
  await expect(notification).toContainText('Something went wrong on our side.');
  await page.waitForTimeout(500); // let the notification finish sliding in for the screenshot
  await shot(page, '10-forced-error-notification');

  await page.getByRole('button', { name: 'Break this page' }).click();
  await expect(page.getByRole('heading', { name: 'Something went wrong' })).toBeVisible();
  await expect(
    page.getByText(
      'There was a problem loading the page. If this continues, please reach out to us at help@lockstep.test.',
    ),
  ).toBeVisible();
  await expect(page.getByRole('link', { name: 'Return to dashboard' })).toHaveAttribute('href', '/syncs');
  await shot(page, '10b-something-went-wrong');
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByRole('heading', { name: 'Developer tools' })).toBeVisible();

  await page.goto('/no/such/page');
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Read docs' })).toBeVisible();
  await shot(page, '12-not-found');
  await page.goto('/syncs/new/with/extra?segments=1');
  await expect(page.getByRole('heading', { name: 'New sync' })).toBeVisible();
});

test('staff assign a plan, set a flag, impersonate a user and stop', async ({ browser }) => {
  // A user without a plan, with dev mode off.
  const email = uniqueEmail('impersonated');
  const userContext = await browser.newContext();
  const userPage = await userContext.newPage();
  await setSkipPaywall(userPage, false);
  await signUp(userPage, email, 'Ivy User');
  await expect(userPage.getByRole('link', { name: 'Choose Plan' })).toHaveAttribute('href', /pricing/);

  // Staff sign in (the staff account may exist already from the previous test).
  const staffContext = await browser.newContext();
  const page = await staffContext.newPage();
  await setSkipPaywall(page, false);
  await signUpOrIn(page, STAFF_EMAIL, 'Stella Staff');

  // The SELECT_A_PLAN_URL flag sends the user's Choose Plan link to the in-app chooser.
  await page.goto('/settings/flags');
  await page.getByLabel('Find a user').fill(email);
  await page
    .getByRole('row', { name: new RegExp(email) })
    .getByRole('button', { name: 'Edit flags' })
    .click();
  await page.getByRole('switch', { name: 'SELECT_A_PLAN_URL' }).check();
  await shot(page, '13-staff-flags');
  await page.getByRole('button', { name: 'Save flags' }).click();
  await expect(page.getByText('Flags saved.')).toBeVisible();
  await userPage.reload();
  await expect(userPage.getByRole('link', { name: 'Choose Plan' })).toHaveAttribute(
    'href',
    '/account/signup',
  );
  await userContext.close();

  // Assign a plan from the users table.
  await page.goto('/settings/users');
  await page.getByPlaceholder('Search by email or name').fill(email);
  const row = page.getByRole('row', { name: new RegExp(email) });
  await expect(row).toBeVisible();
  await expect(page.getByRole('row')).toHaveCount(2); // the header and the one match
  await expect(row.getByRole('cell', { name: 'No Plan' })).toBeVisible();
  await shot(page, '11-staff-users');
  await row.getByRole('button', { name: 'Assign plan' }).click();
  const dialog = page.getByRole('dialog', { name: 'Assign a plan' });
  // A click that lands while the modal is still opening can leave the dropdown shut (seen once in
  // CI): click again until the options show.
  await expect(async () => {
    await dialog.getByRole('combobox', { name: 'Plan' }).click();
    await expect(page.getByRole('option', { name: 'Business' })).toBeVisible({ timeout: 1500 });
  }).toPass({ timeout: 15_000 });
  await page.getByRole('option', { name: 'Business' }).click();
  await shot(page, '14-assign-plan');
  await dialog.getByRole('button', { name: 'Assign plan' }).click();
  await expect(row.getByRole('cell', { name: 'Business' })).toBeVisible();

  // Impersonate: a banner says so; stopping returns to the staff account.
  await row.getByRole('button', { name: 'Impersonate' }).click();
  await expect(page).toHaveURL(/\/syncs$/);
  await expect(page.getByText(`You are acting as ${email}`)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Account menu' })).toContainText('Ivy User');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(page.getByText('Business', { exact: true })).toBeVisible();
  await shot(page, '15-impersonating');
  await page.getByRole('button', { name: 'Stop impersonating' }).click();
  await expect(page).toHaveURL(/\/settings\/users$/);
  await expect(page.getByRole('button', { name: 'Account menu' })).toContainText('Stella Staff');
  await expect(page.getByText('You are acting as')).toHaveCount(0);
  await staffContext.close();
});

test('a user renames themself, changes their password (a weak one refused) and signs out from the profile', async ({
  page,
}) => {
  const email = uniqueEmail('grace');
  await setSkipPaywall(page, true);
  await signUp(page, email, 'Grace H');
  await page.goto('/settings/profile');
  await page.getByLabel('Name').fill('Grace Hopper');
  await page.getByRole('button', { name: 'Save name' }).click();
  await expect(page.getByText('Your name is saved.')).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Name')).toHaveValue('Grace Hopper');

  // A weak new password is refused with the reason; a strong one is taken.
  await page.getByLabel('Current password').fill('correct-horse-42');
  await page.getByLabel('New password').fill('password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByText(/Could not change your password/)).toBeVisible();
  await page.getByLabel('New password').fill('violet-anchor-map-91');
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByText(/Your password is changed/)).toBeVisible();
  await shot(page, '09-profile-edited');

  // Sign out from the page; the new password signs in.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill('violet-anchor-map-91');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/syncs$/);
});
