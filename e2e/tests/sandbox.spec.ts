import { expect, test } from '@playwright/test';
import { setSkipPaywall, shot, signUp, uniqueEmail } from './helpers';

test('a new user tries Airtable without an account: the sandbox connects and its tables are read', async ({
  page,
}) => {
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('sandbox'), 'Sam Sandbox');
  await page.goto('/account/signup/pro');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await page.goto('/syncs/new');
  await page.getByLabel('Name').press('Enter');
  await expect(page).toHaveURL(/\/syncs\/edit\//);
  const card = page.getByTestId('side-left');
  await card.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: 'Airtable' }).click();
  await card.getByRole('button', { name: 'Use the Airtable Sandbox' }).click();
  await card.getByRole('button', { name: /^Use / }).click();
  await expect(card.getByText('Connected')).toBeVisible();
  await expect(card).toContainText('Contacts');
  await shot(page, '40-airtable-sandbox-connected');
});
