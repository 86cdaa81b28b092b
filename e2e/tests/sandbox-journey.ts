import { expect, type Page } from '@playwright/test';
import { setSkipPaywall, shot, signUp, uniqueEmail } from './helpers';

// Issue 17's journey for a pair of apps a new user can try without accounts (the sandboxes, the
// demo databases), as they click it: connect both, automap, pair any option the other app lacks
// where the field mapping flags it, preview, apply; then no issue, and a fresh scan of both apps
// (read whole through their APIs, not Lockstep's own tables) finds nothing to create, update or
// resolve, and no duplicate on either side.

/** An app of the sync's side: its name in the App list and the button that connects it without an account. */
export type Side = { option: string; button: string };

async function connectSandbox(page: Page, side: 'left' | 'right', app: Side) {
  const card = page.getByTestId(`side-${side}`);
  await card.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: new RegExp(`^${app.option}( \\(beta\\))?$`) }).click();
  await card.getByRole('button', { name: app.button }).click();
  // A sandbox with several bases (Notion's databases) asks which one: the first, as the pairs test does.
  const base = card.getByRole('combobox', { name: 'Base' });
  await expect(card.getByText('Connected').or(base)).toBeVisible({ timeout: 30_000 });
  if (await base.isVisible()) {
    await expect(base).toHaveAttribute('placeholder', 'Choose a base');
    await base.click();
    await page.getByRole('listbox').getByRole('option').first().click();
    await card.getByRole('button', { name: /^Use / }).click();
  }
  await expect(card.getByText('Connected')).toBeVisible({ timeout: 30_000 });
}

/** On a field mapping page: every option flagged "not paired" gets the first option the other app offers. */
async function pairFlaggedOptions(page: Page) {
  const flagged = page.getByRole('button', { name: /^Options: \d+ not paired/ });
  while ((await flagged.count()) > 0) {
    await flagged.first().click();
    const dialog = page.getByRole('dialog', { name: /^Options:/ });
    const selects = dialog.getByPlaceholder('Not paired: refused');
    for (let i = 0; i < (await selects.count()); i++) {
      const input = selects.nth(i);
      if ((await input.inputValue()) !== '') continue;
      await input.click();
      await page.getByRole('listbox').getByRole('option').first().click();
    }
    await dialog.getByRole('button', { name: 'Keep these pairs' }).click();
    await expect(dialog).toBeHidden();
  }
}

export async function journey(page: Page, left: Side, right: Side, prefix: string) {
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail(prefix), 'Sam Sandbox');
  await page.goto('/account/signup/pro');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await page.goto('/syncs/new');
  await page.getByLabel('Name').fill(`${left.option} ⇄ ${right.option}`);
  await page.getByLabel('Name').press('Enter');
  await expect(page).toHaveURL(/\/syncs\/edit\/[0-9a-f-]{36}$/);
  const syncId = page.url().split('/').pop() as string;
  await connectSandbox(page, 'left', left);
  await connectSandbox(page, 'right', right);
  await shot(page, `${prefix}-1-connected`);

  await page.getByRole('link', { name: 'Next: map tables' }).click();
  await page.getByRole('button', { name: 'Automap tables and fields' }).click();
  const modal = page.getByRole('dialog', { name: 'Automap' });
  await expect(modal.getByRole('button', { name: 'Map the chosen tables' })).toBeVisible();
  await shot(page, `${prefix}-2-automap`);
  await modal.getByRole('button', { name: 'Map the chosen tables' }).click();
  await expect(modal).toBeHidden();
  const fieldLinks = page.getByRole('link', { name: 'Fields', exact: true });
  await expect(fieldLinks.first()).toBeVisible();
  const pairs = await fieldLinks.count();
  for (let i = 0; i < pairs; i++) {
    await page.goto(`/syncs/${syncId}/table-mappings`);
    await fieldLinks.nth(i).click();
    await expect(page.getByRole('button', { name: 'Save fields' })).toBeVisible();
    await pairFlaggedOptions(page);
    await shot(page, `${prefix}-3-fields-${i + 1}`);
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/rest/core-bases/')),
      page.getByRole('button', { name: 'Save fields' }).click(),
    ]);
  }

  await page.goto(`/syncs/${syncId}/table-mappings`);
  await shot(page, `${prefix}-3-tables`);
  await page.getByRole('link', { name: 'Next: preview the first sync' }).click();
  await page.getByRole('button', { name: 'Start scanning' }).click();
  await expect(page).toHaveURL(/\/sync-preview\/preview$/, { timeout: 90_000 });
  await expect(page.getByTestId('preview-no-problems')).toBeVisible();
  await shot(page, `${prefix}-4-preview`);
  await page.getByRole('button', { name: 'Apply and start syncing' }).click();
  await expect(page).toHaveURL(new RegExp(`/syncs/${syncId}$`), { timeout: 120_000 });
  await shot(page, `${prefix}-5-overview`);

  // Nothing became an issue.
  await page.goto(`/syncs/${syncId}/issues`);
  await expect(page.getByText(/^No (open )?issues/).first()).toBeVisible();
  await shot(page, `${prefix}-6-no-issues`);

  // Both apps read whole again, as Scan again does: nothing left to write either way, no conflict,
  // and no duplicate on either side (duplicates stop a scan at "cannot be matched yet").
  await page.goto(`/syncs/${syncId}/sync-preview/scan`);
  await page.getByRole('button', { name: 'Preview again' }).click();
  await expect(page).toHaveURL(/\/sync-preview\/preview$/, { timeout: 90_000 });
  await expect(page.getByTestId('preview-no-problems')).toBeVisible();
  await shot(page, `${prefix}-7-rescan-in-step`);
  const tiles = page.getByTestId(/^summary-(To create|To update|Conflicts)/);
  await expect(tiles).toHaveCount(5);
  for (const tile of await tiles.all()) await expect(tile).toHaveText('0');
  // Every record is a linked pair, already in step.
  expect(Number(await page.getByTestId('summary-Matched pairs').textContent())).toBeGreaterThan(0);
  await expect(page.getByRole('tab', { name: /^Already in step \([1-9]/ })).toBeVisible();
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
}
