import { expect, test } from '@playwright/test';
import { setSkipPaywall, shot, signUp, sql, uniqueEmail } from './helpers';
import { journey } from './sandbox-journey';

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
  await expect(card.getByText('Connected')).toBeVisible();
  await expect(card).toContainText('Contacts');
  await shot(page, '40-airtable-sandbox-connected');
});

test('Airtable Sandbox <-> Demo CRM: automap pairs the status options, the preview is clean, apply ends with no issue', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('sandbox-crm'), 'Sam Sandbox');
  await page.goto('/account/signup/pro');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await page.goto('/syncs/new');
  await page.getByLabel('Name').fill('Airtable ⇄ CRM');
  await page.getByLabel('Name').press('Enter');
  await expect(page).toHaveURL(/\/syncs\/edit\/[0-9a-f-]{36}$/);
  const syncId = page.url().split('/').pop() as string;
  const left = page.getByTestId('side-left');
  await left.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: 'Airtable' }).click();
  await left.getByRole('button', { name: 'Use the Airtable Sandbox' }).click();
  await expect(left.getByText('Connected')).toBeVisible();
  const right = page.getByTestId('side-right');
  await right.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: 'PostgreSQL' }).click();
  await right.getByRole('button', { name: 'Use Demo CRM' }).click();
  await expect(right.getByText('Connected')).toBeVisible();
  const contactsBefore = Number((await sql('demo_crm', 'select count(*)::int as n from contacts'))[0]?.n);

  // Automap: Contacts ⇄ contacts with their fields, the Status options paired with lifecycle_stage's.
  await page.getByRole('link', { name: 'Next: map tables' }).click();
  await page.getByRole('button', { name: 'Automap tables and fields' }).click();
  const modal = page.getByRole('dialog', { name: 'Automap' });
  await expect(modal.getByText('Contacts ⇄ contacts')).toBeVisible();
  await shot(page, '41-sandbox-crm-automap');
  await modal.getByRole('button', { name: 'Map the chosen tables' }).click();
  await page
    .getByRole('row')
    .filter({ hasText: 'Contacts ⇄ contacts' })
    .getByRole('link', { name: 'Fields' })
    .click();
  const options = page.getByRole('button', { name: /^Options/ }).first();
  await expect(options).toHaveText('Options');
  await options.click();
  const pairs = page.getByRole('dialog', { name: /^Options:/ });
  await expect(pairs.getByText('lead', { exact: true })).toBeVisible();
  await shot(page, '42-sandbox-crm-option-pairs');
  await pairs.getByRole('button', { name: 'Keep these pairs' }).click();
  await page.getByRole('button', { name: 'Save fields' }).click();

  // Preview: no problem to resolve; apply.
  await page.getByRole('link', { name: 'Next: preview the first sync' }).click();
  await page.getByRole('button', { name: 'Start scanning' }).click();
  await expect(page).toHaveURL(/\/sync-preview\/preview$/, { timeout: 60_000 });
  await expect(page.getByTestId('preview-no-problems')).toBeVisible();
  await shot(page, '43-sandbox-crm-preview');
  // One table pair at a time: the contacts to create in the CRM, each with its email.
  await page.getByText('Contacts ⇄ contacts', { exact: true }).click();
  await expect(page.getByRole('cell', { name: /@/ }).first()).toBeVisible();
  await shot(page, '43b-sandbox-crm-preview-contacts');
  await page.getByRole('button', { name: 'Apply and start syncing' }).click();
  await expect(page).toHaveURL(new RegExp(`/syncs/${syncId}$`), { timeout: 90_000 });

  // Every Airtable contact is in the CRM, and nothing became an issue (230 did before).
  await expect
    .poll(async () => Number((await sql('demo_crm', 'select count(*)::int as n from contacts'))[0]?.n), {
      timeout: 60_000,
    })
    .toBe(contactsBefore + 50);
  await page.goto(`/syncs/${syncId}/issues`);
  await expect(page.getByText(/^No (open )?issues/).first()).toBeVisible();
  await shot(page, '44-sandbox-crm-no-issues');
});

// Last of the run: the Demo CRM is shared by the tests above, and this sync adds HubSpot's contacts to it.
test('HubSpot Sandbox <-> Demo CRM: automap (a Full name for contacts), preview, apply; no issue, no duplicate, in step', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await journey(
    page,
    { option: 'HubSpot', button: 'Use the HubSpot Sandbox' },
    { option: 'PostgreSQL', button: 'Use Demo CRM' },
    '47-hubspot-crm',
  );
});

// After HubSpot, on the same Demo CRM: Salesforce's contacts (a Full name made of first and last name,
// no Salesforce sign-in set up on this server), then Affinity's people.
test('Salesforce Sandbox <-> Demo CRM: automap (a Full name for contacts), preview, apply; no issue, no duplicate, in step', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await journey(
    page,
    { option: 'Salesforce', button: 'Use the Salesforce Sandbox' },
    { option: 'PostgreSQL', button: 'Use Demo CRM' },
    '48-salesforce-crm',
  );
});

test('Affinity Sandbox <-> Demo CRM: automap (a Full name for people), preview, apply; no issue, no duplicate, in step', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await journey(
    page,
    { option: 'Affinity', button: 'Use the Affinity Sandbox' },
    { option: 'PostgreSQL', button: 'Use Demo CRM' },
    '49-affinity-crm',
  );
});
