import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../http.ts';
import {
  type GoogleSheetsSimulator,
  SCOPES,
  type StartGoogleSheetsSimulatorOptions,
  startGoogleSheetsSimulator,
} from './index.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are read loosely in assertions.
type Json = Record<string, any>;
const started: GoogleSheetsSimulator[] = [];

async function start(options: StartGoogleSheetsSimulatorOptions = {}): Promise<GoogleSheetsSimulator> {
  const sim = await startGoogleSheetsSimulator({ quota: false, idSeed: 1, ...options });
  started.push(sim);
  return sim;
}

afterEach(async () => {
  while (started.length) await started.pop()?.close();
});

async function call(
  sim: GoogleSheetsSimulator,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; form?: Record<string, string> } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sim.token : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  } else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body,
    redirect: 'manual',
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

const ss = (sim: GoogleSheetsSimulator) => sim.sales?.spreadsheetId as string;
const enc = encodeURIComponent;

describe('auth and access', () => {
  it('answers 401 UNAUTHENTICATED without a valid token, and after revocation', async () => {
    const sim = await start();
    const missing = await call(sim, `/v4/spreadsheets/${ss(sim)}`, { token: null });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}`, { token: 'ya29.wrong' })).status).toBe(401);
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}`)).status).toBe(200);
    sim.revokeToken(sim.token);
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}`)).status).toBe(401);
  });

  it('limits drive.file to spreadsheets granted to the app; 404 for unknown ids; read-only scopes cannot write', async () => {
    const sim = await start({
      tokens: [{ token: 'ya29.readonly', scopes: [SCOPES.spreadsheetsReadonly] }],
    });
    const hidden = sim.sales?.privateSpreadsheetId as string;
    const denied = await call(sim, `/v4/spreadsheets/${hidden}`);
    expect(denied.status).toBe(403);
    expect(denied.body.error.status).toBe('PERMISSION_DENIED');
    expect((await call(sim, `/v4/spreadsheets/${hidden}`, { token: sim.driveToken })).status).toBe(200);
    const missing = await call(sim, '/v4/spreadsheets/nope');
    expect(missing.body).toEqual({
      error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' },
    });
    const write = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2')}?valueInputOption=RAW`,
      {
        method: 'PUT',
        token: 'ya29.readonly',
        body: { values: [['x']] },
      },
    );
    expect(write.status).toBe(403);
    expect(write.body.error.message).toBe('Request had insufficient authentication scopes.');
  });

  it('lists spreadsheets through Drive files.list with the drive.file filter and paging', async () => {
    const sim = await start();
    const q = enc(`mimeType='application/vnd.google-apps.spreadsheet' and trashed=false`);
    const mine = await call(
      sim,
      `/drive/v3/files?q=${q}&fields=${enc('files(id,name,mimeType),nextPageToken')}`,
    );
    expect(mine.status).toBe(200);
    expect(mine.body.files).toEqual([
      { id: ss(sim), name: 'Sales pipeline', mimeType: 'application/vnd.google-apps.spreadsheet' },
    ]);
    const all = await call(sim, `/drive/v3/files?q=${q}&pageSize=1`, { token: sim.driveToken });
    expect(all.body.files).toHaveLength(1);
    expect(all.body.files[0].kind).toBe('drive#file');
    const next = await call(sim, `/drive/v3/files?q=${q}&pageSize=1&pageToken=${all.body.nextPageToken}`, {
      token: sim.driveToken,
    });
    expect(next.body.files).toHaveLength(1);
    expect(next.body.nextPageToken).toBeUndefined();
    expect((await call(sim, `/drive/v3/files?q=${enc('bogus query')}`)).status).toBe(400);
  });

  it('runs the OAuth code flow with access_type=offline and refreshes without rotating', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    const clientId = 'lockstep-simulator.apps.googleusercontent.com';
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const auth = await call(
      sim,
      `/o/oauth2/v2/auth?client_id=${clientId}&redirect_uri=${enc('http://localhost/cb')}&response_type=code&access_type=offline&state=s1&scope=${enc(SCOPES.driveFile)}&code_challenge=${challenge}&code_challenge_method=S256`,
      { token: null },
    );
    expect(auth.status).toBe(302);
    const location = new URL(auth.headers.get('location') as string);
    expect(location.searchParams.get('state')).toBe('s1');
    const code = location.searchParams.get('code') as string;
    const form = {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      client_secret: 'GOCSPX-simulator',
      redirect_uri: 'http://localhost/cb',
      code_verifier: verifier,
    };
    const tokens = await call(sim, '/token', { method: 'POST', token: null, form });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ expires_in: 3599, token_type: 'Bearer', scope: SCOPES.driveFile });
    expect(tokens.body.refresh_token).toMatch(/^1\/\//);
    expect((await call(sim, '/token', { method: 'POST', token: null, form })).body.error).toBe(
      'invalid_grant',
    );
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}`, { token: tokens.body.access_token })).status).toBe(
      200,
    );
    clock.advance(3600_000);
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}`, { token: tokens.body.access_token })).status).toBe(
      401,
    );
    const refreshed = await call(sim, '/token', {
      method: 'POST',
      token: null,
      form: {
        grant_type: 'refresh_token',
        refresh_token: tokens.body.refresh_token,
        client_id: clientId,
        client_secret: 'GOCSPX-simulator',
      },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBeUndefined();
    expect(
      (await call(sim, `/v4/spreadsheets/${ss(sim)}`, { token: refreshed.body.access_token })).status,
    ).toBe(200);
  });
});

describe('spreadsheets.get and values', () => {
  it('describes sheets with grid properties, and applies a field mask', async () => {
    const sim = await start();
    const res = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}?fields=${enc('spreadsheetId,properties.timeZone,sheets(properties(sheetId,title,gridProperties))')}`,
    );
    expect(res.body).toEqual({
      spreadsheetId: ss(sim),
      properties: { timeZone: 'America/New_York' },
      sheets: [
        {
          properties: {
            sheetId: 0,
            title: 'Leads',
            gridProperties: { rowCount: 1000, columnCount: 26, frozenRowCount: 1 },
          },
        },
        {
          properties: {
            sheetId: sim.sales?.sheets.companies,
            title: 'Companies',
            gridProperties: { rowCount: 1000, columnCount: 26, frozenRowCount: 1 },
          },
        },
      ],
    });
  });

  it('renders FORMATTED_VALUE, UNFORMATTED_VALUE with serial dates, FORMATTED_STRING and FORMULA', async () => {
    const sim = await start();
    const path = (q: string) => `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1:G2')}?${q}`;
    const formatted = await call(sim, path(''));
    expect(formatted.body.range).toBe('Leads!A1:G2');
    expect(formatted.body.majorDimension).toBe('ROWS');
    expect(formatted.body.values[0]).toEqual([
      'Name',
      'Email',
      'Company',
      'Stage',
      'Deal size',
      'Signed up',
      'Newsletter',
    ]);
    const row = formatted.body.values[1];
    expect(row[4]).toMatch(/^\$[\d,]+\.00$/);
    expect(row[5]).toMatch(/^\d{1,2}\/\d{1,2}\/20\d\d$/);
    expect(['TRUE', 'FALSE']).toContain(row[6]);

    const raw = (
      await call(sim, path('valueRenderOption=UNFORMATTED_VALUE&dateTimeRenderOption=SERIAL_NUMBER'))
    ).body.values[1];
    expect(typeof raw[4]).toBe('number');
    expect(typeof raw[6]).toBe('boolean');
    // Serial numbers count days from 1899-12-30.
    const [m, d, y] = (row[5] as string).split('/').map(Number) as [number, number, number];
    expect(raw[5]).toBe((Date.UTC(y, m - 1, d) - Date.UTC(1899, 11, 30)) / 86_400_000);
    const strings = (
      await call(sim, path('valueRenderOption=UNFORMATTED_VALUE&dateTimeRenderOption=FORMATTED_STRING'))
    ).body.values[1];
    expect(strings[5]).toBe(row[5]);

    const companies = `/v4/spreadsheets/${ss(sim)}/values/${enc('Companies!G2')}`;
    expect((await call(sim, `${companies}?valueRenderOption=FORMULA`)).body.values).toEqual([['=F2/D2']]);
    expect(
      (await call(sim, `${companies}?valueRenderOption=UNFORMATTED_VALUE`)).body.values[0][0],
    ).toBeCloseTo(250_000_000 / 1200);
  });

  it('omits trailing empty rows and cells, keeps inner empties, and supports COLUMNS and batchGet', async () => {
    const sim = await start({ seed: { leads: 3 } });
    const whole = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/Leads?valueRenderOption=UNFORMATTED_VALUE`,
    );
    expect(whole.body.range).toBe('Leads!A1:Z1000');
    expect(whole.body.values).toHaveLength(4);
    const empty = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A100:C200')}`);
    expect(empty.body).toEqual({ range: 'Leads!A100:C200', majorDimension: 'ROWS' });
    sim.editCell(ss(sim), 'Leads', 'C2', '');
    const inner = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2:D2')}`);
    expect(inner.body.values[0][2]).toBe('');
    const cols = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1:B3')}?majorDimension=COLUMNS`,
    );
    expect(cols.body.values[0][0]).toBe('Name');
    expect(cols.body.values[1][0]).toBe('Email');
    const batch = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values:batchGet?ranges=${enc('Leads!A1')}&ranges=${enc("'Companies'!A1:B1")}`,
    );
    expect(batch.body.valueRanges.map((v: Json) => v.values)).toEqual([[['Name']], [['Company', 'Domain']]]);
  });

  it('refuses unparseable ranges and ranges past the grid with 400 INVALID_ARGUMENT', async () => {
    const sim = await start();
    const bad = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Nope!A1')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({
      code: 400,
      message: 'Unable to parse range: Nope!A1',
      status: 'INVALID_ARGUMENT',
    });
    const past = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1:A1001')}`);
    expect(past.body.error.message).toBe(
      'Range (Leads!A1:A1001) exceeds grid limits. Max rows: 1000, max columns: 26',
    );
  });
});

describe('writing values', () => {
  it('updates with RAW and USER_ENTERED (dates, booleans, numbers, apostrophe, formulas); null skips a cell', async () => {
    const sim = await start({ seed: { leads: 2 } });
    const url = (q: string) =>
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2:G2')}?${q}&includeValuesInResponse=true&responseValueRenderOption=UNFORMATTED_VALUE`;
    const raw = await call(sim, url('valueInputOption=RAW'), {
      method: 'PUT',
      body: { values: [['=1+1', null, null, 'TRUE', 10, '2026-01-01', false]] },
    });
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({
      updatedRange: 'Leads!A2:G2',
      updatedRows: 1,
      updatedColumns: 7,
      updatedCells: 5,
    });
    const before = sim.values(ss(sim), 'Leads')[1] as unknown[];
    expect(before[0]).toBe('=1+1');
    expect(before[3]).toBe('TRUE');
    expect(before[5]).toBe('2026-01-01');
    const user = await call(sim, url('valueInputOption=USER_ENTERED'), {
      method: 'PUT',
      body: { values: [['=1+1', "'=not a formula", null, 'TRUE', '1,500', '2026-01-01', "'TRUE"]] },
    });
    expect(user.body.updatedData.values[0]).toEqual([
      2,
      '=not a formula',
      before[2],
      true,
      1500,
      46023,
      'TRUE',
    ]);
    // The date cell keeps its m/d/yyyy format.
    const shown = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!F2:F2')}`);
    expect(shown.body.values).toEqual([['1/1/2026']]);
  });

  it('refuses values past the range or the grid, and cells over 50000 characters, changing nothing', async () => {
    const sim = await start({ seed: { leads: 2 } });
    const before = sim.values(ss(sim), 'Leads');
    const over = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2:B2')}?valueInputOption=RAW`,
      {
        method: 'PUT',
        body: { values: [['a', 'b', 'c']] },
      },
    );
    expect(over.status).toBe(400);
    expect(over.body.error.message).toBe(
      'Requested writing within range [Leads!A2:B2], but tried writing to column [C]',
    );
    const batch = await call(sim, `/v4/spreadsheets/${ss(sim)}/values:batchUpdate`, {
      method: 'POST',
      body: {
        valueInputOption: 'RAW',
        data: [
          { range: 'Leads!A2', values: [['changed']] },
          { range: 'Leads!A3', values: [['x'.repeat(50_001)]] },
        ],
      },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.error.message).toMatch(/more than the maximum of 50000 characters/);
    expect(sim.values(ss(sim), 'Leads')).toEqual(before);
  });

  it('appends after the table: INSERT_ROWS grows the grid, and returns tableRange and updates', async () => {
    const sim = await start({ seed: { leads: 3 } });
    const res = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1:G1')}:append?valueInputOption=USER_ENTERED&insertDataOption=INSERT_ROWS&includeValuesInResponse=true&responseValueRenderOption=UNFORMATTED_VALUE`,
      { method: 'POST', body: { values: [["'New person", 'new@example.com']] } },
    );
    expect(res.status).toBe(200);
    expect(res.body.tableRange).toBe('Leads!A1:G4');
    expect(res.body.updates).toMatchObject({ updatedRange: 'Leads!A5:B5', updatedRows: 1, updatedCells: 2 });
    expect(res.body.updates.updatedData.values).toEqual([['New person', 'new@example.com']]);
    const grid = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}?fields=${enc('sheets.properties.gridProperties.rowCount')}`,
    );
    expect(grid.body.sheets[0].properties.gridProperties.rowCount).toBe(1001);
  });
});

describe('developer metadata', () => {
  const key = 'lockstep.rowId';
  async function tagRows(sim: GoogleSheetsSimulator, rows: number[]) {
    return call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: rows.map((r) => ({
          createDeveloperMetadata: {
            developerMetadata: {
              metadataKey: key,
              metadataValue: `row-${r}`,
              visibility: 'DOCUMENT',
              location: { dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: r, endIndex: r + 1 } },
            },
          },
        })),
      },
    });
  }
  const search = (sim: GoogleSheetsSimulator, dataFilters: unknown[]) =>
    call(sim, `/v4/spreadsheets/${ss(sim)}/developerMetadata:search`, {
      method: 'POST',
      body: { dataFilters },
    });
  const rowsOf = (body: Json) =>
    (body.matchedDeveloperMetadata ?? []).map((m: Json) => [
      m.developerMetadata.metadataValue,
      m.developerMetadata.location.dimensionRange.startIndex,
    ]);

  it('creates row metadata and finds it by key, value and intersecting location', async () => {
    const sim = await start({ seed: { leads: 5 } });
    const created = await tagRows(sim, [1, 2, 3]);
    expect(created.status).toBe(200);
    expect(created.body.replies[0].createDeveloperMetadata.developerMetadata).toMatchObject({
      metadataKey: key,
      metadataValue: 'row-1',
      visibility: 'DOCUMENT',
      location: {
        locationType: 'ROW',
        dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 },
      },
    });
    const all = await search(sim, [
      {
        developerMetadataLookup: {
          metadataKey: key,
          locationType: 'ROW',
          metadataLocation: { sheetId: 0 },
          locationMatchingStrategy: 'INTERSECTING_LOCATION',
        },
      },
    ]);
    expect(rowsOf(all.body)).toEqual([
      ['row-1', 1],
      ['row-2', 2],
      ['row-3', 3],
    ]);
    const chunk = await search(sim, [
      {
        developerMetadataLookup: {
          metadataKey: key,
          metadataLocation: { dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: 2, endIndex: 4 } },
          locationMatchingStrategy: 'INTERSECTING_LOCATION',
        },
      },
    ]);
    expect(rowsOf(chunk.body)).toEqual([
      ['row-2', 2],
      ['row-3', 3],
    ]);
    const one = await search(sim, [{ developerMetadataLookup: { metadataValue: 'row-3' } }]);
    expect(rowsOf(one.body)).toEqual([['row-3', 3]]);
    expect((await search(sim, [{ developerMetadataLookup: { metadataValue: 'none' } }])).body).toEqual({});
  });

  it('moves row metadata with its row when rows are inserted, moved or sorted, and drops it with a deleted row', async () => {
    const sim = await start({ seed: { leads: 5 } });
    await tagRows(sim, [1, 2, 3]);
    const id = ss(sim);
    sim.insertRows(id, 'Leads', 2, [['Inserted', 'ins@example.com']]);
    expect(sim.state.rowsWithMetadata(id, key).map((r) => [r.value, r.index])).toEqual([
      ['row-1', 1],
      ['row-2', 3],
      ['row-3', 4],
    ]);
    sim.moveRows(id, 'Leads', 4, 1, 1);
    expect(sim.state.rowsWithMetadata(id, key).map((r) => [r.value, r.index])).toEqual([
      ['row-3', 1],
      ['row-1', 2],
      ['row-2', 4],
    ]);
    const name = (sim.values(id, 'Leads')[4] as unknown[])[0];
    sim.deleteRows(id, 'Leads', 2);
    expect(sim.state.rowsWithMetadata(id, key).map((r) => r.value)).toEqual(['row-3', 'row-2']);
    expect((sim.values(id, 'Leads')[3] as unknown[])[0]).toBe(name);
    sim.sortRows(id, 'Leads', 0, false);
    const names = sim
      .values(id, 'Leads')
      .slice(1)
      .map((r) => r[0]);
    for (const r of sim.state.rowsWithMetadata(id, key)) expect(names[r.index - 1]).toBeDefined();
    // And through the API: deleteDimension bottom-up in one request; insertDimension shifts.
    const res = await call(sim, `/v4/spreadsheets/${id}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: [
          {
            insertDimension: {
              range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 3 },
              inheritFromBefore: true,
            },
          },
          { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 } } },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.replies).toEqual([{}, {}]);
    expect(sim.state.rowsWithMetadata(id, key).every((r) => r.index >= 2)).toBe(true);
  });

  it('reads and writes values through a metadata data filter', async () => {
    const sim = await start({ seed: { leads: 5 } });
    await tagRows(sim, [3]);
    sim.insertRows(ss(sim), 'Leads', 1, [['Pushed down']]);
    const filter = { developerMetadataLookup: { metadataKey: key, metadataValue: 'row-3' } };
    const write = await call(sim, `/v4/spreadsheets/${ss(sim)}/values:batchUpdateByDataFilter`, {
      method: 'POST',
      body: {
        valueInputOption: 'RAW',
        includeValuesInResponse: true,
        responseValueRenderOption: 'UNFORMATTED_VALUE',
        data: [
          { dataFilter: filter, values: [['Renamed', null, null, 'Won']] },
          {
            dataFilter: { developerMetadataLookup: { metadataKey: key, metadataValue: 'gone' } },
            values: [['x']],
          },
        ],
      },
    });
    expect(write.status).toBe(200);
    expect(write.body.responses).toHaveLength(1);
    expect(write.body.responses[0]).toMatchObject({ updatedRange: 'Leads!A5:D5', dataFilter: filter });
    expect(write.body.responses[0].updatedData.values[0].slice(0, 4)[3]).toBe('Won');
    const read = await call(sim, `/v4/spreadsheets/${ss(sim)}/values:batchGetByDataFilter`, {
      method: 'POST',
      body: { dataFilters: [filter], valueRenderOption: 'UNFORMATTED_VALUE' },
    });
    expect(read.body.valueRanges[0].valueRange.range).toBe('Leads!A5:Z5');
    expect(read.body.valueRanges[0].valueRange.values[0][0]).toBe('Renamed');
  });

  it('is atomic: one invalid request in a batchUpdate applies nothing', async () => {
    const sim = await start({ seed: { leads: 5 } });
    const res = await call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: [
          { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 } } },
          { createDeveloperMetadata: { developerMetadata: { metadataKey: key, location: { sheetId: 0 } } } },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'Invalid requests[1].createDeveloperMetadata: Developer metadata must specify a visibility.',
    );
    expect(sim.values(ss(sim), 'Leads')).toHaveLength(6);
  });

  it('updates and deletes metadata by data filter', async () => {
    const sim = await start({ seed: { leads: 3 } });
    await tagRows(sim, [1, 2]);
    const res = await call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: [
          {
            updateDeveloperMetadata: {
              dataFilters: [{ developerMetadataLookup: { metadataValue: 'row-1' } }],
              developerMetadata: { metadataValue: 'renamed' },
              fields: 'metadataValue',
            },
          },
          {
            deleteDeveloperMetadata: { dataFilter: { developerMetadataLookup: { metadataValue: 'row-2' } } },
          },
        ],
      },
    });
    expect(res.body.replies[0].updateDeveloperMetadata.developerMetadata[0].metadataValue).toBe('renamed');
    expect(res.body.replies[1].deleteDeveloperMetadata.deletedDeveloperMetadata).toHaveLength(1);
    expect(sim.state.rowsWithMetadata(ss(sim), key).map((r) => r.value)).toEqual(['renamed']);
  });
});

describe('spreadsheets.getByDataFilter', () => {
  const key = 'lockstep.rowId';
  const byFilter = (
    sim: GoogleSheetsSimulator,
    body: unknown,
    opts: { fields?: string; token?: string } = {},
  ) =>
    call(
      sim,
      `/v4/spreadsheets/${ss(sim)}:getByDataFilter${opts.fields ? `?fields=${enc(opts.fields)}` : ''}`,
      { method: 'POST', body, ...(opts.token ? { token: opts.token } : {}) },
    );

  it('returns the grid ranges selected by sheet id with values and each row’s metadata, under a field mask', async () => {
    const sim = await start({
      seed: { leads: 5 },
      tokens: [{ token: 'ya29.readonly', scopes: [SCOPES.spreadsheetsReadonly] }],
    });
    await call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: [2, 4].map((r) => ({
          createDeveloperMetadata: {
            developerMetadata: {
              metadataId: 100 + r,
              metadataKey: key,
              metadataValue: `row-${r}`,
              visibility: 'DOCUMENT',
              location: { dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: r, endIndex: r + 1 } },
            },
          },
        })),
      },
    });
    const fields =
      'properties/timeZone,sheets(properties(sheetId,title,gridProperties(rowCount)),data(startRow,rowData(values(effectiveValue)),rowMetadata(developerMetadata(metadataId,metadataValue))))';
    const res = await byFilter(
      sim,
      {
        dataFilters: [
          {
            gridRange: {
              sheetId: 0,
              startRowIndex: 0,
              endRowIndex: 1,
              startColumnIndex: 0,
              endColumnIndex: 2,
            },
          },
          {
            gridRange: {
              sheetId: 0,
              startRowIndex: 3,
              endRowIndex: 10,
              startColumnIndex: 0,
              endColumnIndex: 1,
            },
          },
        ],
        // Ignored: a field mask decides.
        includeGridData: false,
      },
      { fields, token: 'ya29.readonly' },
    );
    expect(res.status).toBe(200);
    // Only the sheet the filters touch.
    expect(res.body.properties).toEqual({ timeZone: 'America/New_York' });
    expect(res.body.sheets).toHaveLength(1);
    expect(res.body.sheets[0].properties).toEqual({
      sheetId: 0,
      title: 'Leads',
      gridProperties: { rowCount: 1000 },
    });
    const [header, window] = res.body.sheets[0].data;
    expect(header.startRow).toBeUndefined();
    expect(header.rowData).toEqual([
      { values: [{ effectiveValue: { stringValue: 'Name' } }, { effectiveValue: { stringValue: 'Email' } }] },
    ]);
    expect(window.startRow).toBe(3);
    // Rows 3..5 hold data; the empty rows after them are left out of rowData but not of rowMetadata.
    expect(window.rowData).toHaveLength(3);
    expect(window.rowData[0].values[0].effectiveValue.stringValue).toBe(sim.values(ss(sim), 'Leads')[3]?.[0]);
    expect(window.rowMetadata).toHaveLength(7);
    expect(window.rowMetadata[1]).toEqual({
      developerMetadata: [{ metadataId: 104, metadataValue: 'row-4' }],
    });
    expect(window.rowMetadata[0]).toEqual({});

    // A metadata lookup selects the row that carries it; without a mask and includeGridData, no data.
    const lookup = await byFilter(sim, {
      dataFilters: [{ developerMetadataLookup: { metadataKey: key, metadataValue: 'row-2' } }],
      includeGridData: true,
    });
    expect(lookup.body.sheets[0].data[0]).toMatchObject({
      startRow: 2,
      rowData: [{ values: expect.any(Array) }],
    });
    expect(lookup.body.sheets[0].data[0].rowMetadata[0].developerMetadata[0].metadataValue).toBe('row-2');
    const noData = await byFilter(sim, { dataFilters: [{ a1Range: 'Companies!A1:B2' }] });
    expect(noData.body.sheets.map((x: Json) => x.properties.title)).toEqual(['Companies']);
    expect(noData.body.sheets[0].data).toBeUndefined();
    // It is a read: it counts against the read quota and works with a read-only scope (above).
    expect(sim.requestLog.count({ path: `/v4/spreadsheets/${ss(sim)}:getByDataFilter` })).toBe(3);
  });

  it('refuses grid ranges past the grid, on unknown sheets, or reversed, with 400 INVALID_ARGUMENT', async () => {
    const sim = await start({ seed: { leads: 2 } });
    const past = await byFilter(sim, {
      dataFilters: [{ gridRange: { sheetId: 0, startRowIndex: 0, endRowIndex: 1001 } }],
    });
    expect(past.status).toBe(400);
    expect(past.body.error).toEqual({
      code: 400,
      message: 'Range (Leads!A1:Z1001) exceeds grid limits. Max rows: 1000, max columns: 26',
      status: 'INVALID_ARGUMENT',
    });
    const unknown = await byFilter(sim, { dataFilters: [{ gridRange: { sheetId: 42 } }] });
    expect(unknown.body.error.message).toBe('Invalid dataFilters[0]: No grid with id: 42');
    const reversed = await byFilter(sim, {
      dataFilters: [{ gridRange: { sheetId: 0, startRowIndex: 5, endRowIndex: 2 } }],
    });
    expect(reversed.status).toBe(400);
  });
});

describe('batchUpdate: updateCells and repeatCell', () => {
  const batch = (sim: GoogleSheetsSimulator, requests: unknown[]) =>
    call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, { method: 'POST', body: { requests } });

  it('writes typed values as given (no parsing), formulas only from formulaValue, and keeps formats', async () => {
    const sim = await start({ seed: { leads: 2 } });
    const res = await batch(sim, [
      {
        updateCells: {
          start: { sheetId: 0, rowIndex: 1, columnIndex: 0 },
          rows: [
            {
              values: [
                { userEnteredValue: { stringValue: '=1+1' } },
                { userEnteredValue: { stringValue: 'TRUE' } },
                { userEnteredValue: { formulaValue: '=2*21' } },
                {},
                { userEnteredValue: { numberValue: 1234.5 } },
                { userEnteredValue: { numberValue: 46023 } },
                { userEnteredValue: { boolValue: true } },
              ],
            },
          ],
          fields: 'userEnteredValue',
        },
      },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.replies).toEqual([{}]);
    const row = sim.values(ss(sim), 'Leads')[1];
    // Column D was cleared (an empty CellData under the mask); E and F keep their currency and date formats.
    expect(row).toEqual(['=1+1', 'TRUE', 42, '', 1234.5, 46023, true]);
    const shown = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!E2:F2')}`);
    expect(shown.body.values).toEqual([['$1,234.50', '1/1/2026']]);
  });

  it('clears what the rows do not cover in a range, and repeatCell sets a number format over a range', async () => {
    const sim = await start({ seed: { leads: 3 } });
    const res = await batch(sim, [
      {
        updateCells: {
          range: { sheetId: 0, startRowIndex: 1, endRowIndex: 3, startColumnIndex: 0, endColumnIndex: 2 },
          rows: [{ values: [{ userEnteredValue: { stringValue: 'Only one' } }] }],
          fields: 'userEnteredValue',
        },
      },
      {
        repeatCell: {
          range: { sheetId: 0, startRowIndex: 1, endRowIndex: 3, startColumnIndex: 3, endColumnIndex: 4 },
          cell: { userEnteredFormat: { numberFormat: { type: 'DATE', pattern: 'yyyy-mm-dd' } } },
          fields: 'userEnteredFormat.numberFormat',
        },
      },
      {
        updateCells: {
          start: { sheetId: 0, rowIndex: 1, columnIndex: 3 },
          rows: [{ values: [{ userEnteredValue: { numberValue: 46023 } }] }],
          fields: 'userEnteredValue',
        },
      },
    ]);
    expect(res.status).toBe(200);
    const values = sim.values(ss(sim), 'Leads');
    expect(values[1]?.slice(0, 2)).toEqual(['Only one', '']);
    expect(values[2]?.slice(0, 2)).toEqual(['', '']);
    const shown = await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!D2')}`);
    expect(shown.body.values).toEqual([['2026-01-01']]);
    // userEnteredFormat with no numberFormat under the mask removes the format.
    await batch(sim, [
      {
        repeatCell: {
          range: { sheetId: 0, startRowIndex: 1, endRowIndex: 2, startColumnIndex: 3, endColumnIndex: 4 },
          cell: {},
          fields: 'userEnteredFormat',
        },
      },
    ]);
    expect((await call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!D2')}`)).body.values).toEqual([
      ['46023'],
    ]);
  });

  it('inserts rows, fills them and tags them in one atomic batch; a metadata id that exists refuses it all', async () => {
    const sim = await start({ seed: { leads: 3 } });
    const rows = (names: string[], at: number, ids: number[]) => [
      {
        insertDimension: {
          range: { sheetId: 0, dimension: 'ROWS', startIndex: at, endIndex: at + names.length },
          inheritFromBefore: true,
        },
      },
      {
        updateCells: {
          start: { sheetId: 0, rowIndex: at, columnIndex: 0 },
          rows: names.map((n) => ({ values: [{ userEnteredValue: { stringValue: n } }] })),
          fields: 'userEnteredValue',
        },
      },
      ...names.map((n, k) => ({
        createDeveloperMetadata: {
          developerMetadata: {
            metadataId: ids[k],
            metadataKey: 'lockstep.rowId',
            metadataValue: n,
            visibility: 'DOCUMENT',
            location: {
              dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: at + k, endIndex: at + k + 1 },
            },
          },
        },
      })),
    ];
    const first = await batch(sim, rows(['New A', 'New B'], 4, [7, 8]));
    expect(first.status).toBe(200);
    expect(
      first.body.replies.slice(2).map((r: Json) => r.createDeveloperMetadata.developerMetadata.metadataId),
    ).toEqual([7, 8]);
    expect(sim.values(ss(sim), 'Leads').map((r) => r[0])).toHaveLength(6);
    // New rows take the number formats of the row above them.
    expect(sim.state.sheet(ss(sim), 'Leads').rows[5]?.cells[5]?.fmt?.type).toBe('DATE');
    const before = sim.values(ss(sim), 'Leads');
    const again = await batch(sim, rows(['New C', 'New B'], 6, [9, 8]));
    expect(again.status).toBe(400);
    expect(again.body.error.message).toBe(
      'Invalid requests[3].createDeveloperMetadata: Developer metadata with ID 8 already exists.',
    );
    expect(sim.values(ss(sim), 'Leads')).toEqual(before);
    expect(sim.state.rowsWithMetadata(ss(sim), 'lockstep.rowId').map((r) => r.value)).toEqual([
      'New A',
      'New B',
    ]);
  });

  it('refuses bad updateCells and repeatCell requests with 400', async () => {
    const sim = await start({ seed: { leads: 2 } });
    const message = async (request: unknown) => {
      const res = await batch(sim, [request]);
      expect(res.status).toBe(400);
      return res.body.error.message as string;
    };
    const cell = (userEnteredValue: unknown) => ({
      updateCells: {
        start: { sheetId: 0, rowIndex: 1, columnIndex: 0 },
        rows: [{ values: [{ userEnteredValue }] }],
        fields: 'userEnteredValue',
      },
    });
    expect(await message({ updateCells: { start: { sheetId: 0 }, rows: [] } })).toBe(
      'Invalid requests[0].updateCells: At least one field must be specified.',
    );
    expect(await message(cell({ errorValue: { type: 'ERROR', message: 'x' } }))).toMatch(/read-only/);
    expect(await message(cell({ stringValue: 'x'.repeat(50_001) }))).toMatch(/maximum of 50000 characters/);
    expect(await message(cell({ stringValue: 'a', numberValue: 1 }))).toMatch(/exactly one/);
    expect(
      await message({
        updateCells: {
          start: { sheetId: 0, rowIndex: 999, columnIndex: 0 },
          rows: [{ values: [{}] }, { values: [{}] }],
          fields: 'userEnteredValue',
        },
      }),
    ).toBe(
      'Invalid requests[0].updateCells: Range (Leads!A1001) exceeds grid limits. Max rows: 1000, max columns: 26',
    );
    expect(
      await message({
        updateCells: { start: { sheetId: 0 }, rows: [], fields: 'userEnteredValue,bogus' },
      }),
    ).toMatch(/'bogus' is not a field of CellData/);
    expect(
      await message({
        repeatCell: {
          range: { sheetId: 0, startRowIndex: 1, endRowIndex: 2 },
          cell: { userEnteredFormat: { numberFormat: { type: 'FANCY' } } },
          fields: 'userEnteredFormat.numberFormat',
        },
      }),
    ).toMatch(/NumberFormat.Type/);
  });

  it('gives formula errors their ErrorType in effective values', async () => {
    const sim = await start({ seed: { leads: 2 } });
    sim.editCell(ss(sim), 'Leads', 'H2', '=1/0');
    const res = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}?ranges=${enc('Leads!H2')}&fields=${enc('sheets.data.rowData.values(effectiveValue,formattedValue)')}`,
    );
    expect(res.body.sheets[0].data[0].rowData[0].values[0]).toEqual({
      effectiveValue: { errorValue: { type: 'DIVIDE_BY_ZERO', message: 'Formula error #DIV/0!' } },
      formattedValue: '#DIV/0!',
    });
  });
});

describe('quotas, payloads and faults', () => {
  it('answers 429 RESOURCE_EXHAUSTED after 60 reads per user per minute; writes count apart; the window refills', async () => {
    const clock = new ManualClock();
    const sim = await start({ clock, quota: {} });
    const read = () => call(sim, `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1')}`);
    for (let i = 0; i < 60; i++) expect((await read()).status).toBe(200);
    const limited = await read();
    expect(limited.status).toBe(429);
    expect(limited.body.error.status).toBe('RESOURCE_EXHAUSTED');
    expect(limited.body.error.message).toMatch(/Read requests per minute per user/);
    expect(limited.headers.get('retry-after')).toBeNull();
    const write = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2')}?valueInputOption=RAW`,
      {
        method: 'PUT',
        body: { values: [['ok']] },
      },
    );
    expect(write.status).toBe(200);
    clock.advance(60_001);
    expect((await read()).status).toBe(200);
  });

  it('refuses payloads over the limit with Google’s message', async () => {
    const sim = await start({ payloadLimitBytes: 1000 });
    const res = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A2')}?valueInputOption=RAW`,
      {
        method: 'PUT',
        body: { values: [['x'.repeat(2000)]] },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Request payload size exceeds the limit: 1000 bytes.');
  });

  it('injects rate limits in Google’s format and logs requests', async () => {
    const sim = await start();
    sim.faults.next({ kind: 'rate_limit', count: 1 });
    const res = await call(sim, `/v4/spreadsheets/${ss(sim)}`);
    expect(res.status).toBe(429);
    expect(res.body.error.status).toBe('RESOURCE_EXHAUSTED');
    expect(sim.requestLog.count({ status: 429 })).toBe(1);
  });
});

describe('large writes', () => {
  // 150,000 rows once answered 500 "Maximum call stack size exceeded": the rows (and their widths)
  // were spread into splice/Math.max arguments.
  it('appends, inserts and moves 150,000 rows without overflowing the stack', async () => {
    const sim = await start();
    const firstLead = sim.values(ss(sim), 'Leads')[1]?.[0];
    const rows = Array.from({ length: 150_000 }, (_, i) => [`Lead ${i}`, i]);
    const appended = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}/values/${enc('Leads!A1:B1')}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`,
      { method: 'POST', body: { values: rows } },
    );
    expect(appended.status).toBe(200);
    expect(appended.body.updates).toMatchObject({
      updatedRows: 150_000,
      updatedColumns: 2,
      updatedCells: 300_000,
    });
    const inserted = await call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, {
      method: 'POST',
      body: {
        requests: [
          {
            insertDimension: {
              range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 150_001 },
              inheritFromBefore: false,
            },
          },
          {
            moveDimension: {
              source: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 150_001 },
              destinationIndex: 150_100,
            },
          },
        ],
      },
    });
    expect(inserted.status).toBe(200);
    // 1,000 rows, 150,000 inserted by the append, 150,000 by insertDimension.
    expect(sim.state.sheet(ss(sim), 'Leads').rows.length).toBe(301_000);
    const values = sim.values(ss(sim), 'Leads');
    expect(values[1]?.[0]).toBe(firstLead);
    expect(values.at(-1)).toEqual(['Lead 149999', 149999]);
    // The blank rows moved below the first 99 rows with data.
    expect(values[99]?.[0]).toBe('Lead 58');
    expect(values[100]).toEqual([]);
  }, 60_000);
});

describe('developer metadata storage limits', () => {
  const create = (key: string, value: string, location: Json) => ({
    createDeveloperMetadata: {
      developerMetadata: { metadataKey: key, metadataValue: value, location, visibility: 'DOCUMENT' },
    },
  });
  const batch = (sim: GoogleSheetsSimulator, requests: Json[]) =>
    call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, { method: 'POST', body: { requests } });
  const row = (i: number) => ({
    dimensionRange: { sheetId: 0, dimension: 'ROWS', startIndex: i, endIndex: i + 1 },
  });

  it('holds 30,000 characters of keys and values per sheet and per spreadsheet, then answers 400', async () => {
    const sim = await start();
    // 30,000 characters on sheet 0, spread over rows and the sheet itself: accepted, exactly at the limit.
    const full = await batch(sim, [
      create('k', 'v'.repeat(9_999), row(1)),
      create('k', 'v'.repeat(9_999), row(2)),
      create('k', 'v'.repeat(9_999), { sheetId: 0 }),
    ]);
    expect(full.status).toBe(200);
    const over = await batch(sim, [create('x', '', row(3))]);
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(over.body.error.message).toMatch(/^Invalid requests\[0\]\.createDeveloperMetadata: .*30000/);
    // Another sheet and the spreadsheet itself have their own 30,000 characters.
    const companies = sim.state.sheet(ss(sim), 'Companies').sheetId;
    expect((await batch(sim, [create('k', 'v'.repeat(29_999), { sheetId: companies })])).status).toBe(200);
    expect((await batch(sim, [create('k', 'v'.repeat(29_999), { spreadsheet: true })])).status).toBe(200);
    expect((await batch(sim, [create('k', 'v', { spreadsheet: true })])).status).toBe(400);
    // A growing update is refused too, and the refused batch changed nothing.
    const updated = await batch(sim, [
      {
        updateDeveloperMetadata: {
          dataFilters: [
            { developerMetadataLookup: { locationType: 'SHEET', metadataLocation: { sheetId: companies } } },
          ],
          developerMetadata: { metadataValue: 'v'.repeat(30_000) },
          fields: 'metadataValue',
        },
      },
    ]);
    expect(updated.status).toBe(400);
    const found = await call(sim, `/v4/spreadsheets/${ss(sim)}/developerMetadata:search`, {
      method: 'POST',
      body: { dataFilters: [{ developerMetadataLookup: { metadataKey: 'x' } }] },
    });
    expect(found.body.matchedDeveloperMetadata).toBeUndefined();
  });

  it('can be turned off', async () => {
    const sim = await start({ developerMetadataLimit: false });
    expect((await batch(sim, [create('k', 'v'.repeat(40_000), { sheetId: 0 })])).status).toBe(200);
  });
});

describe('hidden dimensions and protected ranges', () => {
  const update = (sim: GoogleSheetsSimulator, requests: unknown[]) =>
    call(sim, `/v4/spreadsheets/${ss(sim)}:batchUpdate`, { method: 'POST', body: { requests } });
  const protectedRanges = async (sim: GoogleSheetsSimulator) =>
    (await call(sim, `/v4/spreadsheets/${ss(sim)}?fields=${encodeURIComponent('sheets(protectedRanges)')}`))
      .body.sheets[0].protectedRanges;

  it('hides a column and protects it (warning only); both follow the column as others are inserted, and go with it', async () => {
    const sim = await start();
    const col = { sheetId: 0, dimension: 'COLUMNS', startIndex: 7, endIndex: 8 };
    const added = await update(sim, [
      {
        updateDimensionProperties: { range: col, properties: { hiddenByUser: true }, fields: 'hiddenByUser' },
      },
      {
        addProtectedRange: {
          protectedRange: {
            range: { sheetId: 0, startColumnIndex: 7, endColumnIndex: 8 },
            description: 'ids',
            warningOnly: true,
          },
        },
      },
    ]);
    expect(added.status).toBe(200);
    const id = added.body.replies[1].addProtectedRange.protectedRange.protectedRangeId;
    expect(typeof id).toBe('number');
    // A column inserted before it moves both one to the right.
    await update(sim, [
      {
        insertDimension: {
          range: { sheetId: 0, dimension: 'COLUMNS', startIndex: 0, endIndex: 1 },
          inheritFromBefore: false,
        },
      },
    ]);
    expect(await protectedRanges(sim)).toEqual([
      {
        protectedRangeId: id,
        range: { sheetId: 0, startColumnIndex: 8, endColumnIndex: 9 },
        description: 'ids',
        warningOnly: true,
        requestingUserCanEdit: true,
      },
    ]);
    const meta = await call(
      sim,
      `/v4/spreadsheets/${ss(sim)}?ranges=Leads!A1:J1&includeGridData=true&fields=${encodeURIComponent('sheets(data(columnMetadata(hiddenByUser)))')}`,
    );
    const hidden = meta.body.sheets[0].data[0].columnMetadata.map((c: { hiddenByUser?: boolean }) =>
      Boolean(c.hiddenByUser),
    );
    expect(hidden).toEqual([false, false, false, false, false, false, false, false, true, false]);
    // Unhiding clears the flag; deleting the column deletes its protection.
    await update(sim, [
      {
        updateDimensionProperties: {
          range: { ...col, startIndex: 8, endIndex: 9 },
          properties: {},
          fields: 'hiddenByUser',
        },
      },
    ]);
    expect(sim.state.sheet(ss(sim), 'Leads').cols[8]?.hiddenByUser).toBeUndefined();
    await update(sim, [
      { deleteDimension: { range: { sheetId: 0, dimension: 'COLUMNS', startIndex: 8, endIndex: 9 } } },
    ]);
    expect(await protectedRanges(sim)).toBeUndefined();
  });

  it('refuses what Google refuses: no fields mask, editors with warning-only protection, a taken id', async () => {
    const sim = await start();
    const col = { sheetId: 0, dimension: 'COLUMNS', startIndex: 0, endIndex: 1 };
    const noFields = await update(sim, [
      { updateDimensionProperties: { range: col, properties: { hiddenByUser: true } } },
    ]);
    expect(noFields.status).toBe(400);
    const range = { sheetId: 0, startColumnIndex: 0, endColumnIndex: 1 };
    const editors = await update(sim, [
      { addProtectedRange: { protectedRange: { range, warningOnly: true, editors: { users: ['a@b.c'] } } } },
    ]);
    expect(editors.status).toBe(400);
    expect(
      (await update(sim, [{ addProtectedRange: { protectedRange: { range, protectedRangeId: 5 } } }])).status,
    ).toBe(200);
    const taken = await update(sim, [
      { addProtectedRange: { protectedRange: { range, protectedRangeId: 5 } } },
    ]);
    expect(taken.status).toBe(400);
    expect(taken.body.error.status).toBe('INVALID_ARGUMENT');
  });
});
