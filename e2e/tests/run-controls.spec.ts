import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import { eventually, setSkipPaywall, shot, signUp, sql, uniqueEmail } from './helpers';

/**
 * The controls a user has over what Lockstep does, through the browser against the real server,
 * job queue and embedded PostgreSQL: personal API tokens and webhooks on /developer, the dry-run
 * panel of a sync (plan, discard, apply) and "Undo this run" on a run's operations page.
 */

type Received = { headers: http.IncomingHttpHeaders; body: string };

/** A webhook receiver on loopback (the test server allows private hosts), keeping what it gets. */
async function startReceiver() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/lockstep`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('a developer creates a scoped token that works until revoked, and a webhook whose test event arrives signed', async ({
  page,
}) => {
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('developer'), 'Dev Eloper');
  await page.goto('/developer');
  await expect(page.getByText('No tokens yet')).toBeVisible();

  // A token with a name and the write scope: shown once, listed with its scopes.
  await page.getByLabel('Token name').fill('Nightly export');
  await page.getByLabel('Allow writes').check();
  await page.getByRole('button', { name: 'Create token' }).click();
  const once = page.getByTestId('shown-once');
  await expect(once).toContainText('shown this once');
  const token = (await once.locator('code').textContent()) ?? '';
  expect(token).toMatch(/^lst_/);
  const row = page.getByTestId('token-Nightly export');
  await expect(row).toContainText('read');
  await expect(row).toContainText('write');
  await shot(page, '60-developer-token-created');
  // After a reload the token itself is gone: only its prefix is listed.
  await page.reload();
  await expect(row).toBeVisible();
  await expect(page.getByTestId('shown-once')).toHaveCount(0);
  await expect(page.getByText(token)).toHaveCount(0);
  await shot(page, '61-developer-token-after-reload');

  // The REST API answers the token, from outside the browser session.
  const auth = { authorization: `Bearer ${token}` };
  const ok = await page.request.get('/rest/core-bases', { headers: auth });
  expect(ok.status()).toBe(200);
  // Revoked in the page, it stops working at once.
  await row.getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByText('The token is revoked')).toBeVisible();
  await expect(row).toHaveCount(0);
  const refused = await page.request.get('/rest/core-bases', { headers: auth });
  expect(refused.status()).toBe(401);
  await shot(page, '62-developer-token-revoked');

  // A webhook to a local receiver: its secret shown once, a test event delivered and logged.
  const receiver = await startReceiver();
  try {
    await page.getByLabel('Receiver URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secretBox = page.getByTestId('shown-once');
    await expect(secretBox).toContainText('webhook signing secret');
    const secret = (await secretBox.locator('code').textContent()) ?? '';
    expect(secret.length).toBeGreaterThan(16);
    const hook = page.getByTestId(`webhook-${receiver.url}`);
    await expect(hook).toContainText('Active');
    await hook.getByRole('button', { name: 'Send test' }).click();
    await expect(page.getByText(/The test event was delivered \(200, \d+ ms\)/)).toBeVisible();
    await shot(page, '63-developer-webhook-test-sent');

    // The delivery log shows the attempt and the receiver's answer.
    await hook.getByRole('button', { name: 'Deliveries' }).click();
    const log = page.getByRole('dialog', { name: 'Deliveries' }).getByTestId('delivery-log');
    await expect(log.getByRole('row').nth(1)).toContainText('test');
    await expect(log.getByRole('row').nth(1)).toContainText('200');
    await shot(page, '64-developer-webhook-deliveries');

    // The receiver got one POST, signed with the secret as the page says: t=<unix>,v1=<HMAC(t.body)>.
    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    const event = JSON.parse(delivery?.body ?? '{}');
    expect(event.type).toBe('test');
    const signature = String(delivery?.headers['lockstep-signature'] ?? '');
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
    expect(match, signature).not.toBeNull();
    const [, t, v1] = match as RegExpExecArray;
    expect(Math.abs(Date.now() / 1000 - Number(t))).toBeLessThan(120);
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${delivery?.body}`).digest('hex'));
  } finally {
    await receiver.close();
  }
});

// Person 60 of the demo data is in both databases: Ada Johnson.
const EMAIL = 'ada.johnson@example.com';
const crmName = async () =>
  (await sql<{ v: string }>('demo_crm', 'select full_name as v from contacts where email = $1', [EMAIL]))[0]
    ?.v;
const newsletterName = async () =>
  (
    await sql<{ v: string }>(
      'demo_newsletter',
      'select name as v from subscribers where lower(trim(email)) = $1',
      [EMAIL],
    )
  )[0]?.v;

async function connectDemo(page: Page, side: 'left' | 'right', demo: string) {
  const card = page.getByTestId(`side-${side}`);
  await card.getByLabel('App', { exact: true }).click();
  await page.getByRole('option', { name: 'PostgreSQL' }).click();
  await card.getByRole('button', { name: `Use ${demo}` }).click();
  await expect(card.getByText('Connected')).toBeVisible();
}

/** Signs up, starts a trial and syncs the demo CRM's contacts with the demo newsletter's subscribers. */
async function setUpDemoSync(page: Page, name: string): Promise<string> {
  await setSkipPaywall(page, true);
  await signUp(page, uniqueEmail('run-controls'), 'Ron Controls');
  await page.goto('/account/signup/pro');
  await page.locator('[data-tier="pro"]').getByRole('button', { name: 'Start trial' }).click();
  await expect(page).toHaveURL(/\/syncs$/);
  await page.goto('/syncs/new');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Name').press('Enter');
  await expect(page).toHaveURL(/\/syncs\/edit\/[0-9a-f-]{36}$/);
  const syncId = page.url().split('/').pop() as string;
  await connectDemo(page, 'left', 'Demo CRM');
  await connectDemo(page, 'right', 'Demo Newsletter');
  await page.getByRole('link', { name: 'Next: map tables' }).click();
  await page.getByRole('button', { name: 'Automap tables and fields' }).click();
  const modal = page.getByRole('dialog', { name: 'Automap' });
  await expect(modal.getByText('contacts ⇄ subscribers')).toBeVisible();
  // The people only: companies pair with organisations, or with the companies table an earlier spec
  // (journey) created in the newsletter.
  for (const other of await modal.getByRole('checkbox', { name: /^companies ⇄/ }).all())
    if (await other.isChecked()) await other.uncheck();
  await modal.getByRole('button', { name: 'Map the chosen tables' }).click();
  await expect(page.getByRole('cell', { name: 'contacts ⇄ subscribers' })).toBeVisible();
  await page.getByRole('link', { name: 'Next: preview the first sync' }).click();
  await page.getByRole('button', { name: 'Start scanning' }).click();
  await expect(page).toHaveURL(/\/sync-preview\/preview$/, { timeout: 60_000 });
  await page.getByRole('button', { name: 'Apply and start syncing' }).click();
  await expect(page).toHaveURL(new RegExp(`/syncs/${syncId}$`), { timeout: 90_000 });
  await expect(page.getByTestId('sync-label')).toHaveText('Active', { timeout: 60_000 });
  return syncId;
}

test.describe
  .serial('a live sync on the demo databases', () => {
    let context: BrowserContext;
    let page: Page;
    let syncId: string;

    test.beforeAll(async ({ browser }) => {
      test.setTimeout(180_000);
      // The demo databases are shared by every user of a test server: a sync an earlier spec left on
      // (journey's) would carry these tests' edits too. Only this sync writes there from now on, and
      // the person these tests edit starts the same in both apps.
      await sql('lockstep', "update core_base set sync_state = 'off' where sync_state = 'on'");
      await sql('demo_crm', 'update contacts set full_name = $1 where email = $2', ['Ada Johnson', EMAIL]);
      await sql('demo_newsletter', 'update subscribers set name = $1 where lower(trim(email)) = $2', [
        'Ada Johnson',
        EMAIL,
      ]);
      context = await browser.newContext();
      page = await context.newPage();
      syncId = await setUpDemoSync(page, 'Run controls');
      await shot(page, '65-run-controls-sync-live');
    });
    test.afterAll(async () => {
      await context?.close();
    });

    test('dry-run mode plans a change for review: discard keeps it waiting, apply writes it', async () => {
      test.setTimeout(120_000);
      const original = await newsletterName();
      expect(original).toBe(await crmName());
      await page.goto(`/syncs/${syncId}`);
      const panel = page.getByTestId('dry-run');
      const dryRunSwitch = panel.getByRole('switch', { name: 'Dry-run mode' });
      // Enabled once the panel has loaded the sync's plan state.
      await expect(dryRunSwitch).toBeEnabled();
      // A controlled switch: it shows the server's state once the change is saved.
      await dryRunSwitch.click({ force: true });
      await expect(page.getByText('Dry-run mode is on: changes are planned')).toBeVisible();
      await expect(dryRunSwitch).toBeChecked();

      // A change in the CRM is planned, not written.
      await sql('demo_crm', 'update contacts set full_name = $1 where email = $2', ['Ada Planned', EMAIL]);
      await panel.getByRole('button', { name: 'What would the next run do?' }).click();
      const write = panel.getByTestId('dry-run-write').filter({ hasText: 'Ada Planned' });
      await expect(write).toBeVisible({ timeout: 30_000 });
      await expect(write).toContainText('Update');
      await expect(write).toContainText('in Demo Newsletter');
      await expect(write).toContainText(`${original} → Ada Planned`);
      await expect(panel).toContainText('The next run would make 1 write');
      await shot(page, '66-dry-run-planned');
      expect(await newsletterName()).toBe(original);

      // Discard: the list is cleared, the change still waits (not written, planned again by the next pass).
      await panel.getByRole('button', { name: 'Discard' }).click();
      await expect(panel.getByText('The plan was discarded.')).toBeVisible();
      await expect(panel.getByTestId('dry-run-write')).toHaveCount(0);
      await shot(page, '67-dry-run-discarded');
      expect(await newsletterName()).toBe(original);
      await panel.getByRole('button', { name: 'What would the next run do?' }).click();
      await expect(write).toBeVisible({ timeout: 30_000 });
      await expect(write).toContainText(`${original} → Ada Planned`);
      expect(await newsletterName()).toBe(original);

      // Apply: dry-run mode goes off and a run writes the reviewed change.
      await panel.getByRole('button', { name: 'Apply' }).click();
      await expect(panel.getByText('The plan was applied')).toBeVisible();
      await expect(dryRunSwitch).not.toBeChecked();
      await eventually(newsletterName, 'Ada Planned', 30_000);
      await shot(page, '68-dry-run-applied');
    });

    test('"Undo this run" puts back what a run changed in both apps, once', async () => {
      test.setTimeout(120_000);
      const before = await crmName();
      await eventually(newsletterName, before, 30_000);
      await sql('demo_crm', 'update contacts set full_name = $1 where email = $2', ['Ada To Undo', EMAIL]);
      await eventually(newsletterName, 'Ada To Undo', 30_000);

      // The run that carried the edit, found in the sync's operations.
      await page.goto(`/syncs/${syncId}/operations`);
      await page
        .getByRole('row')
        .filter({ hasText: /1 updated (on the right|in Demo Newsletter)/ })
        .getByRole('link')
        .first()
        .click();
      await expect(page).toHaveURL(/\/operations\/[0-9a-f-]{36}$/);
      await expect(page.getByText('Ada To Undo').first()).toBeVisible();
      const runUrl = page.url();
      // The same run open in a second tab, as it was before the undo.
      const stale = await context.newPage();
      await stale.goto(runUrl);
      await expect(stale.getByRole('button', { name: 'Undo this run' })).toBeVisible();
      await shot(page, '69-undo-run-page');

      await page.getByRole('button', { name: 'Undo this run' }).click();
      const confirm = page.getByRole('dialog', { name: 'Undo this run?' });
      await expect(confirm).toContainText('in both Demo CRM and Demo Newsletter');
      await shot(page, '70-undo-confirm');
      await confirm.getByRole('button', { name: 'Undo this run' }).click();
      await expect(page.getByRole('heading', { name: /^Undo run of/ })).toBeVisible();
      await expect(page.getByText('1 restored, 0 held.')).toBeVisible({ timeout: 30_000 });
      await eventually(newsletterName, before, 30_000);
      await eventually(crmName, before, 30_000);
      await shot(page, '71-undo-done');

      // The run now says it was undone and offers no second undo; the stale tab's second try is refused.
      await page.goto(runUrl);
      await expect(page.getByText('This run was undone')).toBeVisible();
      await expect(page.getByRole('button', { name: 'Undo this run' })).toHaveCount(0);
      await stale.getByRole('button', { name: 'Undo this run' }).click();
      await stale
        .getByRole('dialog', { name: 'Undo this run?' })
        .getByRole('button', { name: 'Undo this run' })
        .click();
      await expect(stale.getByText('Could not undo this run')).toBeVisible();
      await expect(stale.getByText('This run has already been undone')).toBeVisible();
      await shot(stale, '72-undo-refused-twice');
      expect(await newsletterName()).toBe(before);
      expect(await crmName()).toBe(before);
    });
  });
