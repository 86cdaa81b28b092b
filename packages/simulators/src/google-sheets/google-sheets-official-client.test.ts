/**
 * Contract test: Google's own Node.js client (googleapis, pinned; gaxios underneath) against the
 * simulator, with an OAuth2 client holding an access token, as the Google Sheets connector
 * authenticates. Answers are checked against the client's sheets_v4 types, not only for not throwing.
 */
import { type Common, google, type sheets_v4 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../http.ts';
import { type GoogleSheetsSimulator, startGoogleSheetsSimulator } from './index.ts';

function sheetsFor(sim: GoogleSheetsSimulator, token: string): sheets_v4.Sheets {
  const auth = new google.auth.OAuth2();
  auth.setCredentials({ access_token: token });
  return google.sheets({ version: 'v4', auth, rootUrl: `${sim.url}/` });
}

async function failure(p: Promise<unknown>): Promise<Common.GaxiosError> {
  const err = await p.then(
    () => {
      throw new Error('expected the client to reject');
    },
    (e: unknown) => e,
  );
  // By class name: googleapis and google-auth-library may each bring their own copy of gaxios, so
  // the error need not be an instance of the copy that `Common` re-exports.
  expect((err as Error).constructor.name).toBe('GaxiosError');
  return err as Common.GaxiosError;
}

describe('googleapis sheets v4 against the Google Sheets simulator', () => {
  let sim: GoogleSheetsSimulator;
  let sheets: sheets_v4.Sheets;
  let id: string;
  beforeAll(async () => {
    sim = await startGoogleSheetsSimulator({ quota: false, idSeed: 3 });
    sheets = sheetsFor(sim, sim.token);
    id = sim.sales!.spreadsheetId;
  });
  afterAll(() => sim.close());

  it('gets a spreadsheet: properties, sheets and grid properties', async () => {
    const res = await sheets.spreadsheets.get({ spreadsheetId: id });
    expect(res.status).toBe(200);
    const ss: sheets_v4.Schema$Spreadsheet = res.data;
    expect(ss.spreadsheetId).toBe(id);
    expect(ss.properties).toMatchObject({
      title: 'Sales pipeline',
      timeZone: 'America/New_York',
      locale: 'en_US',
    });
    expect(ss.sheets?.map((s) => s.properties?.title)).toEqual(['Leads', 'Companies']);
    const leads = ss.sheets?.[0]?.properties;
    expect(leads).toMatchObject({ sheetId: 0, index: 0, sheetType: 'GRID' });
    expect(typeof leads?.gridProperties?.rowCount).toBe('number');
    expect(leads?.gridProperties?.frozenRowCount).toBe(1);
    expect(typeof ss.spreadsheetUrl).toBe('string');

    const masked = await sheets.spreadsheets.get({
      spreadsheetId: id,
      ranges: ['Leads!A1:B2'],
      includeGridData: true,
      fields: 'sheets(properties(title),data(rowData(values(userEnteredValue,formattedValue))))',
    });
    expect(masked.data.spreadsheetId).toBeUndefined();
    const row = masked.data.sheets?.[0]?.data?.[0]?.rowData?.[0]?.values?.[0];
    expect(row).toEqual({ userEnteredValue: { stringValue: 'Name' }, formattedValue: 'Name' });
  });

  it('reads values: get and batchGet with render options', async () => {
    const got = await sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Leads!A1:G3' });
    const vr: sheets_v4.Schema$ValueRange = got.data;
    expect(vr.range).toBe('Leads!A1:G3');
    expect(vr.majorDimension).toBe('ROWS');
    expect(vr.values?.[0]).toEqual([
      'Name',
      'Email',
      'Company',
      'Stage',
      'Deal size',
      'Signed up',
      'Newsletter',
    ]);
    for (const cell of vr.values?.[1] ?? []) expect(typeof cell).toBe('string');

    const batch = await sheets.spreadsheets.values.batchGet({
      spreadsheetId: id,
      ranges: ['Leads!A2:A3', 'Companies!A1:B1'],
      valueRenderOption: 'UNFORMATTED_VALUE',
      majorDimension: 'COLUMNS',
    });
    expect(batch.data.spreadsheetId).toBe(id);
    expect(batch.data.valueRanges?.map((v) => v.range)).toEqual(['Leads!A2:A3', 'Companies!A1:B1']);
    expect(batch.data.valueRanges?.[0]?.majorDimension).toBe('COLUMNS');
    expect(batch.data.valueRanges?.[0]?.values?.[0]).toHaveLength(2);
  });

  it('writes values: update, append, batchUpdate', async () => {
    const upd = await sheets.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'Leads!A2:B2',
      valueInputOption: 'USER_ENTERED',
      includeValuesInResponse: true,
      requestBody: { values: [['Ada Lovelace', 'ada@example.com']] },
    });
    const u: sheets_v4.Schema$UpdateValuesResponse = upd.data;
    expect(u).toMatchObject({
      spreadsheetId: id,
      updatedRange: 'Leads!A2:B2',
      updatedRows: 1,
      updatedColumns: 2,
      updatedCells: 2,
    });
    expect(u.updatedData?.values).toEqual([['Ada Lovelace', 'ada@example.com']]);

    const app = await sheets.spreadsheets.values.append({
      spreadsheetId: id,
      range: 'Leads!A1:G1',
      valueInputOption: 'USER_ENTERED',
      insertDataOption: 'INSERT_ROWS',
      requestBody: {
        values: [['Grace Hopper', 'grace@example.com', 'Navy', 'Lead', '$1,200', '2026-01-15', 'TRUE']],
      },
    });
    const a: sheets_v4.Schema$AppendValuesResponse = app.data;
    expect(a.spreadsheetId).toBe(id);
    expect(a.tableRange).toMatch(/^Leads!A1:G\d+$/);
    expect(a.updates).toMatchObject({ updatedRows: 1, updatedColumns: 7, updatedCells: 7 });
    const at = a.updates?.updatedRange as string;
    const back = await sheets.spreadsheets.values.get({
      spreadsheetId: id,
      range: at,
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(back.data.values?.[0]?.[4]).toBe(1200);
    expect(back.data.values?.[0]?.[6]).toBe(true);

    const bu = await sheets.spreadsheets.values.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        valueInputOption: 'RAW',
        data: [
          { range: 'Leads!C2', values: [['Analytical Engines']] },
          { range: 'Companies!A2', values: [['Renamed Co']] },
        ],
      },
    });
    const b: sheets_v4.Schema$BatchUpdateValuesResponse = bu.data;
    expect(b).toMatchObject({
      spreadsheetId: id,
      totalUpdatedRows: 2,
      totalUpdatedCells: 2,
      totalUpdatedSheets: 2,
    });
    expect(b.responses?.map((r) => r.updatedRange)).toEqual(['Leads!C2', 'Companies!A2']);
  });

  it('batchUpdates the spreadsheet: adds a sheet and developer metadata, then finds it', async () => {
    const res = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          {
            addSheet: { properties: { title: 'Archive', gridProperties: { rowCount: 10, columnCount: 3 } } },
          },
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: 'lockstep.test',
                metadataValue: 'row-2',
                visibility: 'DOCUMENT',
                location: { dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 } },
              },
            },
          },
        ],
      },
    });
    const r: sheets_v4.Schema$BatchUpdateSpreadsheetResponse = res.data;
    expect(r.spreadsheetId).toBe(id);
    const added = r.replies?.[0]?.addSheet?.properties;
    expect(added).toMatchObject({
      title: 'Archive',
      sheetType: 'GRID',
      gridProperties: { rowCount: 10, columnCount: 3 },
    });
    expect(typeof added?.sheetId).toBe('number');
    const dm = r.replies?.[1]?.createDeveloperMetadata?.developerMetadata;
    expect(dm).toMatchObject({
      metadataKey: 'lockstep.test',
      metadataValue: 'row-2',
      visibility: 'DOCUMENT',
      location: {
        locationType: 'ROW',
        dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 },
      },
    });
    expect(typeof dm?.metadataId).toBe('number');

    const found = await sheets.spreadsheets.developerMetadata.search({
      spreadsheetId: id,
      requestBody: { dataFilters: [{ developerMetadataLookup: { metadataKey: 'lockstep.test' } }] },
    });
    expect(found.data.matchedDeveloperMetadata?.map((m) => m.developerMetadata?.metadataId)).toEqual([
      dm?.metadataId,
    ]);
    const one = await sheets.spreadsheets.developerMetadata.get({
      spreadsheetId: id,
      metadataId: dm?.metadataId as number,
    });
    expect(one.data.metadataValue).toBe('row-2');
  });

  it('finds rows by their developer metadata: getByDataFilter, batchGetByDataFilter, batchUpdateByDataFilter', async () => {
    const lookup = { developerMetadataLookup: { metadataKey: 'lockstep.test', metadataValue: 'row-2' } };
    const grid = await sheets.spreadsheets.getByDataFilter({
      spreadsheetId: id,
      requestBody: { dataFilters: [lookup], includeGridData: true },
    });
    const data = grid.data.sheets?.[0]?.data?.[0];
    expect(data?.startRow).toBe(1);
    expect(data?.rowData?.[0]?.values?.[0]?.formattedValue).toBe('Ada Lovelace');
    expect(data?.rowMetadata?.[0]?.developerMetadata?.[0]?.metadataKey).toBe('lockstep.test');

    const got = await sheets.spreadsheets.values.batchGetByDataFilter({
      spreadsheetId: id,
      requestBody: { dataFilters: [lookup], valueRenderOption: 'UNFORMATTED_VALUE' },
    });
    const match: sheets_v4.Schema$MatchedValueRange | undefined = got.data.valueRanges?.[0];
    expect(match?.valueRange?.range).toBe('Leads!A2:Z2');
    expect(match?.valueRange?.values?.[0]?.[0]).toBe('Ada Lovelace');
    expect(match?.dataFilters).toEqual([lookup]);

    const put = await sheets.spreadsheets.values.batchUpdateByDataFilter({
      spreadsheetId: id,
      requestBody: {
        valueInputOption: 'RAW',
        data: [{ dataFilter: lookup, values: [['Ada King']] }],
      },
    });
    expect(put.data).toMatchObject({ spreadsheetId: id, totalUpdatedCells: 1 });
    expect(put.data.responses?.[0]?.updatedRange).toBe('Leads!A2');
    expect(sim.values(id, 'Leads')[1]?.[0]).toBe('Ada King');
  });

  it('keeps an id column: column metadata, hidden, protected (warning only), found by metadata where it moved', async () => {
    const added = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: { requests: [{ addSheet: { properties: { title: 'Ids' } } }] },
    });
    const sheetId = added.data.replies?.[0]?.addSheet?.properties?.sheetId as number;
    await sheets.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'Ids!A1:B3',
      valueInputOption: 'RAW',
      requestBody: {
        values: [
          ['Name', 'Note'],
          ['Ada', 'x'],
          ['Grace', 'y'],
        ],
      },
    });
    const column = { sheetId, dimension: 'COLUMNS', startIndex: 2, endIndex: 3 };
    const res = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          { insertDimension: { range: column, inheritFromBefore: false } },
          {
            updateCells: {
              start: { sheetId, rowIndex: 0, columnIndex: 2 },
              rows: [
                { values: [{ userEnteredValue: { stringValue: 'Lockstep ID' } }] },
                { values: [{ userEnteredValue: { stringValue: 'id-ada' } }] },
                { values: [{ userEnteredValue: { stringValue: 'id-grace' } }] },
              ],
              fields: 'userEnteredValue',
            },
          },
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: 'test.idColumn',
                metadataValue: '1',
                visibility: 'DOCUMENT',
                location: { dimensionRange: column },
              },
            },
          },
          {
            updateDimensionProperties: {
              range: column,
              properties: { hiddenByUser: true },
              fields: 'hiddenByUser',
            },
          },
          {
            addProtectedRange: {
              protectedRange: {
                range: { sheetId, startColumnIndex: 2, endColumnIndex: 3 },
                description: 'ids',
                warningOnly: true,
              },
            },
          },
        ],
      },
    });
    const protectedRange: sheets_v4.Schema$ProtectedRange | undefined =
      res.data.replies?.[4]?.addProtectedRange?.protectedRange;
    expect(protectedRange).toMatchObject({
      range: { sheetId, startColumnIndex: 2, endColumnIndex: 3 },
      description: 'ids',
      warningOnly: true,
    });
    expect(typeof protectedRange?.protectedRangeId).toBe('number');

    // A person drags the column to the front: the metadata, the hidden flag and the protection follow.
    await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [{ moveDimension: { source: column, destinationIndex: 0 } }],
      },
    });
    const got = await sheets.spreadsheets.get({
      spreadsheetId: id,
      ranges: ['Ids!A1:C3'],
      fields: 'sheets(protectedRanges,data(columnMetadata(hiddenByUser,developerMetadata(metadataKey))))',
    });
    const sheet: sheets_v4.Schema$Sheet | undefined = got.data.sheets?.[0];
    expect(sheet?.protectedRanges?.[0]?.range).toEqual({ sheetId, startColumnIndex: 0, endColumnIndex: 1 });
    const cols: sheets_v4.Schema$DimensionProperties[] = sheet?.data?.[0]?.columnMetadata ?? [];
    expect(cols[0]).toEqual({ hiddenByUser: true, developerMetadata: [{ metadataKey: 'test.idColumn' }] });
    expect(cols[1]).toEqual({});

    // The column's metadata selects the whole column, wherever it is now.
    const found = await sheets.spreadsheets.getByDataFilter({
      spreadsheetId: id,
      fields: 'sheets(data(startColumn,rowData(values(effectiveValue))))',
      requestBody: {
        dataFilters: [
          {
            developerMetadataLookup: {
              metadataKey: 'test.idColumn',
              locationType: 'COLUMN',
              metadataLocation: { sheetId },
              locationMatchingStrategy: 'INTERSECTING_LOCATION',
            },
          },
        ],
      },
    });
    const data: sheets_v4.Schema$GridData | undefined = found.data.sheets?.[0]?.data?.[0];
    expect(data?.startColumn ?? 0).toBe(0);
    expect(data?.rowData?.map((r) => r.values?.[0]?.effectiveValue?.stringValue)).toEqual([
      'Lockstep ID',
      'id-ada',
      'id-grace',
    ]);

    // Row metadata deleted by id (the migration from per-row metadata).
    const tagged = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: 'test.rowId',
                metadataValue: 'old',
                visibility: 'DOCUMENT',
                location: { dimensionRange: { sheetId, dimension: 'ROWS', startIndex: 1, endIndex: 2 } },
              },
            },
          },
        ],
      },
    });
    const metadataId = tagged.data.replies?.[0]?.createDeveloperMetadata?.developerMetadata?.metadataId;
    const deleted = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [{ deleteDeveloperMetadata: { dataFilter: { developerMetadataLookup: { metadataId } } } }],
      },
    });
    expect(
      deleted.data.replies?.[0]?.deleteDeveloperMetadata?.deletedDeveloperMetadata?.map(
        (m) => m.metadataValue,
      ),
    ).toEqual(['old']);

    // values.batchUpdate over a row with null for the id cell leaves it, and answers with it.
    const written = await sheets.spreadsheets.values.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        valueInputOption: 'USER_ENTERED',
        includeValuesInResponse: true,
        responseValueRenderOption: 'UNFORMATTED_VALUE',
        data: [{ range: 'Ids!A2:C2', majorDimension: 'ROWS', values: [[null, 'Ada L.', 'z']] }],
      },
    });
    expect(written.data.responses?.[0]?.updatedData?.values).toEqual([['id-ada', 'Ada L.', 'z']]);
  });

  it('writes through a row tag: createDeveloperMetadata on a row, getByDataFilter with rowMetadata, values.batchUpdateByDataFilter', async () => {
    const made = await sheets.spreadsheets.create({
      requestBody: { properties: { title: 'Tags' }, sheets: [{ properties: { title: 'T' } }] },
    });
    const tid = made.data.spreadsheetId as string;
    const sheetId = made.data.sheets?.[0]?.properties?.sheetId as number;
    await sheets.spreadsheets.values.update({
      spreadsheetId: tid,
      range: 'T!A1:C4',
      valueInputOption: 'RAW',
      requestBody: {
        values: [
          ['Name', 'Stage', 'Id'],
          ['Ada', 'Lead', 'id-a'],
          ['Grace', 'Lead', 'id-g'],
          ['Alan', 'Lead', 'id-t'],
        ],
      },
    });
    const col = { sheetId, dimension: 'COLUMNS', startIndex: 2, endIndex: 3 };
    const tagged = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: tid,
      requestBody: {
        requests: [
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: 'test.idColumn',
                visibility: 'DOCUMENT',
                location: { dimensionRange: col },
              },
            },
          },
          {
            createDeveloperMetadata: {
              developerMetadata: {
                metadataKey: 'test.writing',
                metadataValue: 'id-g',
                visibility: 'DOCUMENT',
                location: { dimensionRange: { sheetId, dimension: 'ROWS', startIndex: 2, endIndex: 3 } },
              },
            },
          },
        ],
      },
    });
    const tag: sheets_v4.Schema$DeveloperMetadata | undefined =
      tagged.data.replies?.[1]?.createDeveloperMetadata?.developerMetadata;
    expect(tag).toMatchObject({
      metadataKey: 'test.writing',
      metadataValue: 'id-g',
      location: {
        locationType: 'ROW',
        dimensionRange: { sheetId, dimension: 'ROWS', startIndex: 2, endIndex: 3 },
      },
    });
    const metadataId = tag?.metadataId as number;
    // A person inserts a row above: the tag moves with Grace's row.
    await sheets.spreadsheets.batchUpdate({
      spreadsheetId: tid,
      requestBody: {
        requests: [
          {
            insertDimension: {
              range: { sheetId, dimension: 'ROWS', startIndex: 1, endIndex: 2 },
              inheritFromBefore: false,
            },
          },
        ],
      },
    });
    // The id column, with each row's metadata: the tag sits on the row whose id cell holds id-g.
    const found = await sheets.spreadsheets.getByDataFilter({
      spreadsheetId: tid,
      fields:
        'sheets(data(startRow,startColumn,rowData(values(effectiveValue)),rowMetadata(developerMetadata(metadataId,metadataKey,metadataValue))))',
      requestBody: {
        dataFilters: [
          {
            developerMetadataLookup: {
              metadataKey: 'test.idColumn',
              locationType: 'COLUMN',
              metadataLocation: { sheetId },
              locationMatchingStrategy: 'INTERSECTING_LOCATION',
            },
          },
        ],
      },
    });
    const data: sheets_v4.Schema$GridData | undefined = found.data.sheets?.[0]?.data?.[0];
    expect(data?.startColumn).toBe(2);
    const rows: sheets_v4.Schema$DimensionProperties[] = data?.rowMetadata ?? [];
    const at = rows.findIndex((r) => r.developerMetadata?.some((m) => m.metadataId === metadataId));
    expect(at).toBe(3);
    expect(data?.rowData?.[at]?.values?.[0]?.effectiveValue?.stringValue).toBe('id-g');

    // Values written through the tag, wherever its row is now; null leaves the id cell.
    const written = await sheets.spreadsheets.values.batchUpdateByDataFilter({
      spreadsheetId: tid,
      requestBody: {
        valueInputOption: 'USER_ENTERED',
        includeValuesInResponse: true,
        responseValueRenderOption: 'UNFORMATTED_VALUE',
        data: [
          {
            dataFilter: { developerMetadataLookup: { metadataId } },
            majorDimension: 'ROWS',
            values: [['Grace H.', 'Won', null]],
          },
        ],
      },
    });
    const answer: sheets_v4.Schema$UpdateValuesByDataFilterResponse | undefined = written.data.responses?.[0];
    expect(answer?.dataFilter?.developerMetadataLookup?.metadataId).toBe(metadataId);
    expect(answer?.updatedData?.values?.[0]).toEqual(['Grace H.', 'Won', 'id-g']);
    expect(written.data.totalUpdatedRows).toBe(1);
    const all = await sheets.spreadsheets.values.get({ spreadsheetId: tid, range: 'T!A1:C5' });
    expect(all.data.values).toEqual([
      ['Name', 'Stage', 'Id'],
      [],
      ['Ada', 'Lead', 'id-a'],
      ['Grace H.', 'Won', 'id-g'],
      ['Alan', 'Lead', 'id-t'],
    ]);

    // The tag found by its id, then deleted; a deleted row takes its tag with it.
    const search = await sheets.spreadsheets.developerMetadata.search({
      spreadsheetId: tid,
      requestBody: { dataFilters: [{ developerMetadataLookup: { metadataId } }] },
    });
    expect(search.data.matchedDeveloperMetadata?.map((m) => m.developerMetadata?.metadataValue)).toEqual([
      'id-g',
    ]);
    await sheets.spreadsheets.batchUpdate({
      spreadsheetId: tid,
      requestBody: {
        requests: [
          { deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: 3, endIndex: 4 } } },
        ],
      },
    });
    const after = await sheets.spreadsheets.developerMetadata.search({
      spreadsheetId: tid,
      requestBody: { dataFilters: [{ developerMetadataLookup: { metadataId } }] },
    });
    expect(after.data.matchedDeveloperMetadata).toBeUndefined();
  });

  it('creates a spreadsheet, clears values and deletes rows', async () => {
    const made = await sheets.spreadsheets.create({
      requestBody: { properties: { title: 'Contract' }, sheets: [{ properties: { title: 'Data' } }] },
    });
    const newId = made.data.spreadsheetId as string;
    expect(made.data.properties?.title).toBe('Contract');
    expect(made.data.sheets?.[0]?.properties).toMatchObject({
      title: 'Data',
      gridProperties: { rowCount: 1000, columnCount: 26 },
    });
    await sheets.spreadsheets.values.update({
      spreadsheetId: newId,
      range: 'Data!A1:A3',
      valueInputOption: 'RAW',
      requestBody: { values: [['a'], ['b'], ['c']] },
    });
    const cleared = await sheets.spreadsheets.values.clear({ spreadsheetId: newId, range: 'Data!A1' });
    expect(cleared.data).toEqual({ spreadsheetId: newId, clearedRange: 'Data!A1' });
    const batchCleared = await sheets.spreadsheets.values.batchClear({
      spreadsheetId: newId,
      requestBody: { ranges: ['Data!A2'] },
    });
    expect(batchCleared.data.clearedRanges).toEqual(['Data!A2']);
    const sheetId = made.data.sheets?.[0]?.properties?.sheetId as number;
    const del = await sheets.spreadsheets.batchUpdate({
      spreadsheetId: newId,
      requestBody: {
        requests: [
          { deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: 0, endIndex: 2 } } },
        ],
        includeSpreadsheetInResponse: true,
      },
    });
    expect(del.data.replies).toEqual([{}]);
    expect(del.data.updatedSpreadsheet?.sheets?.[0]?.properties?.gridProperties?.rowCount).toBe(998);
    const rest = await sheets.spreadsheets.values.get({ spreadsheetId: newId, range: 'Data' });
    expect(rest.data.values).toEqual([['c']]);
  });

  it("reports errors as GaxiosError with the status and Google's message", async () => {
    const missing = await failure(sheets.spreadsheets.get({ spreadsheetId: '1DoesNotExist' }));
    expect(missing.status).toBe(404);
    expect(missing.message).toBe('Requested entity was not found.');
    expect(missing.response?.data).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });

    // drive.file: a spreadsheet the app was never granted.
    const hidden = await failure(sheets.spreadsheets.get({ spreadsheetId: sim.sales!.privateSpreadsheetId }));
    expect(hidden.status).toBe(403);
    expect(hidden.message).toBe('The caller does not have permission');

    const badRange = await failure(sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Nope!A1' }));
    expect(badRange.status).toBe(400);
    expect(badRange.message).toBe('Unable to parse range: Nope!A1');

    const unauth = await failure(sheetsFor(sim, 'ya29.wrong').spreadsheets.get({ spreadsheetId: id }));
    expect(unauth.status).toBe(401);
  });
});

describe('googleapis and the Sheets quotas', () => {
  it('retries a GET refused for quota (429) until the minute passes; a POST is not retried', async () => {
    const clock = new ManualClock();
    const sim = await startGoogleSheetsSimulator({ clock, idSeed: 4, quota: { readsPerMinutePerUser: 2 } });
    try {
      const sheets = sheetsFor(sim, sim.token);
      const id = sim.sales!.spreadsheetId;
      await sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Leads!A1' });
      await sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Leads!A1' });
      // gaxios retries 429 on GET (3 times, 100 ms first); the simulator's minute passes meanwhile.
      const pending = sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Leads!A1' });
      await vi.waitFor(() => expect(sim.requestLog.count({ status: 429 })).toBeGreaterThanOrEqual(1));
      clock.advance(60_000);
      expect((await pending).data.values).toEqual([['Name']]);

      // A read sent as a POST (getByDataFilter) is not retried: the quota error comes back.
      await sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'Leads!A1' });
      const refused = await failure(
        sheets.spreadsheets.getByDataFilter({ spreadsheetId: id, requestBody: { dataFilters: [] } }),
      );
      expect(refused.status).toBe(429);
      expect(refused.message).toMatch(
        /^Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user'/,
      );
      expect(sim.requestLog.count({ method: 'POST', status: 429 })).toBe(1);
    } finally {
      await sim.close();
    }
  });
});
