import { expect, test } from '@playwright/test';
import { setSkipPaywall, shot, signUp, uniqueEmail } from './helpers';

// The data tools a new user finds in the navigation: API import, git sync, blended tables and the
// developer page, each reached by clicking, each showing its first step or empty state, and the
// first action of each working in the browser against the real server.
test('a new user finds API import, git sync, blended tables and the developer page, and each first step works', async ({
  page,
}) => {
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('tools'), 'Tia Tools');

  // API import: a pasted sample response gives a proposed configuration with its reasons.
  await page.getByRole('link', { name: 'API import' }).click();
  await expect(page).toHaveURL(/\/api-import$/);
  await page.getByText('Paste a sample response').click();
  await page.getByLabel('Sample response (JSON)').fill(
    JSON.stringify({
      data: [
        { id: 1, name: 'Ada', email: 'ada@example.com', joined: '2026-01-02' },
        { id: 2, name: 'Grace', email: 'grace@example.com', joined: '2026-02-03' },
      ],
      next_cursor: null,
    }),
  );
  await page.getByRole('button', { name: 'Propose a configuration' }).click();
  await expect(page.getByRole('heading', { name: '2. How to read it' })).toBeVisible();
  await expect(page.getByTestId('api-import-reasons')).toContainText('$.data');
  await shot(page, '50-api-import-proposal');

  // Git sync and blended tables: their empty states, with the way forward.
  await page.getByRole('link', { name: 'Git sync' }).click();
  await expect(page).toHaveURL(/\/git-sync\/core-bases$/);
  await expect(page.getByText('No syncs yet')).toBeVisible();
  await shot(page, '51-git-sync-empty');
  await page.getByRole('link', { name: 'Blended tables' }).click();
  await expect(page).toHaveURL(/\/blended-tables$/);
  await expect(page.getByText('No blended tables yet')).toBeVisible();
  await shot(page, '52-blended-tables-empty');

  // Developer: a token is shown once, and it works against the REST API as this user.
  await page.goto('/developer');
  await expect(page.getByText('No tokens yet')).toBeVisible();
  await page.getByLabel('Token name').fill('CI export');
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByText(/shown this once/)).toBeVisible();
  const token = (await page.getByTestId('shown-once').locator('code').textContent()) ?? '';
  expect(token).toMatch(/^lst_/);
  await shot(page, '53-developer-token-once');
  const res = await page.request.get('/rest/core-bases', { headers: { authorization: `Bearer ${token}` } });
  expect(res.status()).toBe(200);
});
