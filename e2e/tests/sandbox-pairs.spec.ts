import { test } from '@playwright/test';
import { journey } from './sandbox-journey';

// The sandbox pairs, each through the whole journey (sandbox-journey.ts).

test('Google Sheets Sandbox <-> Notion Sandbox: automap, preview, apply; no issue, no duplicate, in step', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await journey(
    page,
    { option: 'Google Sheets', button: 'Use the Google Sheets Sandbox' },
    { option: 'Notion', button: 'Use the Notion Sandbox' },
    '45-sheets-notion',
  );
});

test('Notion Sandbox <-> Airtable Sandbox: automap, pair the flagged option, preview, apply; no issue, no duplicate, in step', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await journey(
    page,
    { option: 'Notion', button: 'Use the Notion Sandbox' },
    { option: 'Airtable', button: 'Use the Airtable Sandbox' },
    '46-notion-airtable',
  );
});
