import { expect, type Page, test } from '@playwright/test';
import { setSkipPaywall, shot, signUp, sql, uniqueEmail } from './helpers';

/**
 * The whole first-sync journey of a new user on the embedded demo databases, through the real
 * server, job queue and PostgreSQL change capture: sign up, create a sync, connect both demo
 * databases, automap, preview, apply; then an edit travels, a refused value becomes an issue, and
 * fixing it and retrying resolves it.
 */

/** Waits until a query's first value is the expected one (the sync is asynchronous by nature). */
async function eventually(database: string, text: string, params: unknown[], expected: unknown, ms = 20_000) {
  const until = Date.now() + ms;
  let last: unknown;
  while (Date.now() < until) {
    const rows = await sql(database, text, params);
    last = rows[0] ? Object.values(rows[0])[0] : undefined;
    if (last === expected) return Date.now();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${text} is ${JSON.stringify(last)}, expected ${JSON.stringify(expected)}`);
}

/** No screen may scroll sideways at the widths people use (1280 and 1920 px). */
async function fitsWidths(page: Page, name: string) {
  for (const width of [1280, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name} at ${width}px`).toBeLessThanOrEqual(0);
  }
  await shot(page, `${name}-1920`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function connectDemo(page: Page, side: 'left' | 'right', demo: string) {
  const card = page.getByTestId(`side-${side}`);
  await card.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: 'PostgreSQL' }).click();
  // The connection form offers both change captures to pick from (triggers by default).
  if (side === 'left') {
    await card.getByLabel('Change capture').click();
    await expect(page.getByRole('option', { name: 'logical' })).toBeVisible();
    await shot(page, '20b-postgresql-connection-form');
    await page.keyboard.press('Escape');
  }
  await card.getByRole('button', { name: `Use ${demo}` }).click();
  // One schema: it is used without asking.
  await expect(card.getByText('Connected')).toBeVisible();
}

// Person 60 of the demo data is in both databases: Ada Johnson.
const EMAIL = 'ada.johnson@example.com';

test('a new user sets up a first sync on the demo databases, watches an edit travel, and fixes a refused record', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('journey'), 'Jo Journey');
  // The e2e server is not local, so the dev plan does not apply there: start a trial as a user would.
  await page.goto('/account/signup/pro');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await expect(page).toHaveURL(/\/syncs$/);

  // Syncs list, empty: the way to a first sync.
  await page.getByRole('link', { name: 'Create your first sync' }).click();
  await expect(page).toHaveURL(/\/syncs\/new$/);
  await expect(page.getByLabel('Name')).toHaveValue('Untitled Sync');
  await page.getByLabel('Name').fill('CRM ⇄ Newsletter');
  await shot(page, '20-sync-new');
  // The keyboard is enough: Enter submits the form.
  await page.getByLabel('Name').press('Enter');
  await expect(page).toHaveURL(/\/syncs\/edit\/[0-9a-f-]{36}$/);
  const syncId = page.url().split('/').pop() as string;

  // Both apps: the demo databases, one click each.
  await connectDemo(page, 'left', 'Demo CRM');
  await connectDemo(page, 'right', 'Demo Newsletter');
  await expect(page.getByTestId('side-left')).toContainText('companies, contacts');
  await shot(page, '21-sync-apps-connected');
  await page.getByRole('link', { name: 'Next: map tables' }).click();

  // Automap: contacts ⇄ subscribers and companies ⇄ organisations, explained, then kept.
  await expect(page.getByRole('heading', { name: 'No tables mapped yet' })).toBeVisible();
  await shot(page, '22-table-mappings-empty');
  await page.getByRole('button', { name: 'Automap tables and fields' }).click();
  const modal = page.getByRole('dialog', { name: 'Automap' });
  await expect(modal.getByText('contacts ⇄ subscribers')).toBeVisible();
  await shot(page, '23-automap-proposals');
  // The organisations pair is a relation target; this journey keeps the people only.
  const companies = modal.getByRole('checkbox', { name: /companies ⇄ organisations/ });
  if (await companies.isChecked()) await companies.uncheck();
  await modal.getByRole('button', { name: 'Map the chosen tables' }).click();
  await expect(page.getByRole('cell', { name: 'contacts ⇄ subscribers' })).toBeVisible();
  await shot(page, '24-table-mappings');

  // The field pairs automap chose, with email as the match field.
  await page.getByRole('link', { name: 'Fields', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Fields: contacts ⇄ subscribers' })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Match records on email' })).toBeChecked();
  await shot(page, '25-field-mappings');
  await fitsWidths(page, '25-field-mappings');
  await page.getByRole('link', { name: 'Tables & fields' }).click();
  await page.getByRole('link', { name: 'Next: preview the first sync' }).click();

  // Preview: scan, match, and record by record what applying will do; nothing written yet.
  await expect(page).toHaveURL(/\/sync-preview\/scan$/);
  await shot(page, '26-preview-start');
  await page.getByRole('button', { name: 'Start scanning' }).click();
  await expect(page).toHaveURL(/\/sync-preview\/preview$/, { timeout: 60_000 });
  await expect(page.getByTestId('summary-Matched pairs')).toHaveText('60');
  await shot(page, '27-preview-ready');
  await fitsWidths(page, '27-preview-ready');
  const before = await sql('demo_newsletter', 'select count(*)::int as n from subscribers');
  expect(before[0]?.n).toBe(120);
  await page.getByRole('button', { name: 'Apply and start syncing' }).click();

  // Applied: the overview of a live sync, both sides with every person.
  await expect(page).toHaveURL(new RegExp(`/syncs/${syncId}$`), { timeout: 90_000 });
  await expect(page.getByTestId('sync-label')).toHaveText(/Active|Syncing changes/, { timeout: 20_000 });
  await expect(page.getByTestId('drift-linked')).toHaveText('180');
  // The overview charts what was written per app and the issues, per day.
  await expect(page.getByTestId('sync-activity').locator('.recharts-surface').first()).toBeVisible();
  await shot(page, '28-sync-overview');
  await fitsWidths(page, '28-sync-overview');
  expect((await sql('demo_newsletter', 'select count(*)::int as n from subscribers'))[0]?.n).toBe(180);
  expect((await sql('demo_crm', 'select count(*)::int as n from contacts'))[0]?.n).toBe(180);

  // An edit in the CRM arrives in the newsletter within seconds, and shows in Operations.
  const edited = Date.now();
  await sql('demo_crm', 'update contacts set full_name = $1 where email = $2', ['Ada J. Edited', EMAIL]);
  const arrived = await eventually(
    'demo_newsletter',
    'select name from subscribers where lower(trim(email)) = $1',
    [EMAIL],
    'Ada J. Edited',
  );
  expect(arrived - edited).toBeLessThan(10_000);
  await page.getByRole('link', { name: 'Operations', exact: true }).first().click();
  await expect(page.getByRole('row').nth(1)).toBeVisible();
  await shot(page, '29-operations');
  // The run that carried the edit, with the value before and after.
  await page
    .getByRole('row')
    .filter({ hasText: /1 updated (on the right|in Demo Newsletter)/ })
    .getByRole('link')
    .first()
    .click();
  await expect(page.getByText('Ada J. Edited').first()).toBeVisible();
  await shot(page, '29b-operation-detail');

  // A value the CRM requires (a contact needs a name) emptied in the newsletter: it is not written,
  // an issue on that record says why, the rest goes on.
  await sql('demo_newsletter', 'update subscribers set name = null where lower(trim(email)) = $1', [EMAIL]);
  await page.goto(`/syncs/${syncId}/issues`);
  await expect(page.getByText(/requires a value/).first()).toBeVisible({ timeout: 30_000 });
  await shot(page, '30-sync-issues');
  await page.goto('/issues');
  // Issues come grouped by cause; the group opens its issues.
  await shot(page, '30b-issues-by-cause');
  await page
    .getByTestId('issue-cause')
    .filter({ hasText: /requires a value/ })
    .getByRole('button', { name: 'Show' })
    .click();
  await expect(
    page
      .getByRole('link')
      .filter({ hasText: /requires a value/ })
      .first(),
  ).toBeVisible();
  await page
    .getByRole('link')
    .filter({ hasText: /requires a value/ })
    .first()
    .click();
  await expect(page).toHaveURL(/\/issues\/[0-9a-f-]{36}$/);
  await shot(page, '31-issue-detail');

  // The user fixes the record in the newsletter and retries: it syncs and the issue is resolved.
  await sql('demo_newsletter', 'update subscribers set name = $1 where lower(trim(email)) = $2', [
    'Ada Fixed',
    EMAIL,
  ]);
  await page
    .getByRole('button', { name: /^Retry/ })
    .first()
    .click();
  await eventually(
    'demo_crm',
    'select full_name from contacts where email = $1',
    [EMAIL],
    'Ada Fixed',
    30_000,
  );
  await expect(page.getByText('resolved').first()).toBeVisible({ timeout: 30_000 });
  await shot(page, '32-issue-resolved');

  // The syncs list shows it live.
  await page.goto('/syncs');
  await expect(page.getByRole('link', { name: 'CRM ⇄ Newsletter' })).toBeVisible();
  await expect(page.getByRole('switch', { name: 'Sync CRM ⇄ Newsletter on' })).toBeChecked();
  await shot(page, '33-syncs-list');

  // A table the other app lacks: schema generation creates it there and the live sync fills it.
  await page.goto(`/syncs/${syncId}/table-mappings`);
  const unpaired = page.getByText('Tables without a partner').locator('..');
  await expect(unpaired).toContainText('companies');
  await shot(page, '34-unpaired-tables');
  await page
    .getByRole('group')
    .or(page.locator('div'))
    .filter({ hasText: /^Demo CRM · companies/ })
    .getByRole('button', { name: 'Create it in Demo Newsletter' })
    .first()
    .click();
  await expect(page.getByRole('cell', { name: 'companies ⇄ companies' })).toBeVisible();
  await eventually('demo_newsletter', 'select count(*)::int as n from public.companies', [], 20, 30_000);

  // Drift at the value level: an edit the newsletter's change capture never sees (triggers skipped)
  // is found by comparing the apps' values, and becomes an issue.
  await sql('demo_newsletter', 'alter table subscribers disable trigger user');
  await sql(
    'demo_newsletter',
    "update subscribers set name = 'Quietly renamed' where lower(trim(email)) = $1",
    [EMAIL],
  );
  await sql('demo_newsletter', 'alter table subscribers enable trigger user');
  await page.goto(`/syncs/${syncId}`);
  await page.getByRole('button', { name: 'Compare every record' }).click();
  await expect(page.getByText(/linked records compared: 1 drifted without a change signal/)).toBeVisible({
    timeout: 60_000,
  });
  await shot(page, '35-value-drift');
  await page.getByRole('link', { name: /Review the drift issues/ }).click();
  await expect(page.getByText(/no change was ever signalled/).first()).toBeVisible();
});
