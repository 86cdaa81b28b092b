/**
 * Contract test for the calls schema generation makes in Google Sheets, through googleapis
 * (sheets v4): spreadsheets.batchUpdate addSheet, values.update of the header row (RAW), and
 * batchUpdate repeatCell with a number format below the header; then a duplicate title refused.
 */
import { google, type sheets_v4 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GoogleSheetsSimulator, startGoogleSheetsSimulator } from './index.ts';

let sim: GoogleSheetsSimulator;
let sheets: sheets_v4.Sheets;
let id: string;
beforeAll(async () => {
  sim = await startGoogleSheetsSimulator({ quota: false, seed: { leads: 1 } });
  const auth = new google.auth.OAuth2();
  auth.setCredentials({ access_token: sim.token });
  sheets = google.sheets({ version: 'v4', auth, rootUrl: `${sim.url}/` });
  id = sim.sales?.spreadsheetId as string;
});
afterAll(async () => sim?.close());

describe('a sheet with a header row, made through googleapis', () => {
  it('adds the sheet, writes the header, formats a column, and reads them back', async () => {
    const res = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          {
            addSheet: {
              properties: { title: 'Orders', gridProperties: { rowCount: 1000, columnCount: 26 } },
            },
          },
        ],
      },
    });
    const sheetId = res.data.replies?.[0]?.addSheet?.properties?.sheetId as number;
    expect(typeof sheetId).toBe('number');
    const upd = await sheets.spreadsheets.values.update({
      spreadsheetId: id,
      range: "'Orders'!A1:C1",
      valueInputOption: 'RAW',
      requestBody: { values: [['Order', 'Total', 'Placed']] },
    });
    expect(upd.data).toMatchObject({ updatedRange: 'Orders!A1:C1', updatedCells: 3 });
    await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          {
            repeatCell: {
              range: { sheetId, startRowIndex: 1, startColumnIndex: 1, endColumnIndex: 2 },
              cell: { userEnteredFormat: { numberFormat: { type: 'CURRENCY', pattern: '"€"#,##0.00' } } },
              fields: 'userEnteredFormat.numberFormat',
            },
          },
        ],
      },
    });
    const header = await sheets.spreadsheets.values.get({ spreadsheetId: id, range: "'Orders'!1:1" });
    expect(header.data.values).toEqual([['Order', 'Total', 'Placed']]);
    const again = await sheets.spreadsheets
      .batchUpdate({
        spreadsheetId: id,
        requestBody: { requests: [{ addSheet: { properties: { title: 'orders' } } }] },
      })
      .catch((e: { status?: number; response?: { status?: number } }) => e);
    expect(
      (again as { status?: number }).status ?? (again as { response?: { status?: number } }).response?.status,
    ).toBe(400);
  });
});
