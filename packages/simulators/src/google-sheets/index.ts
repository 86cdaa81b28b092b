export {
  type A1,
  columnIndex,
  columnLetter,
  formatRange,
  type GridRange,
  parseA1,
  quoteSheetName,
} from './a1.ts';
export {
  type Cell,
  type NumberFormat,
  serialFromInstant,
  serialFromWallTime,
  wallTimeFromSerial,
} from './cells.ts';
export {
  ACCESS_TOKEN_TTL_S,
  DEFAULT_PAYLOAD_LIMIT_BYTES,
  DEFAULT_PROJECT,
  DEFAULT_QUOTA,
  DEFAULT_TOKEN,
  DEVELOPER_METADATA_CHAR_LIMIT,
  GoogleApiError,
  type GoogleSheetsSimulatorOptions,
  GoogleSheetsState,
  type OAuthClient,
  SCOPES,
  type SheetSeed,
  SPREADSHEET_MIME,
  type SpreadsheetSeed,
  startGoogleSheetsServer,
} from './google-sheets-simulator.ts';
export type { MetadataState, SheetState, SpreadsheetState } from './model.ts';
export { COMPANIES_HEADER, LEADS_HEADER, type SalesSeed, seedSales } from './seed.ts';

import type { Clock, FaultInjector, RequestLog } from '../http.ts';
import {
  DEFAULT_TOKEN,
  type GoogleSheetsSimulatorOptions,
  GoogleSheetsState,
  SCOPES,
  startGoogleSheetsServer,
} from './google-sheets-simulator.ts';
import { type SalesSeed, seedSales } from './seed.ts';

export type StartGoogleSheetsSimulatorOptions = GoogleSheetsSimulatorOptions & {
  /** Seed the "Sales pipeline" spreadsheet (default true); a number of leads (default 40). */
  seed?: boolean | { leads?: number };
};

export type GoogleSheetsSimulator = {
  /** Base URL for sheets.googleapis.com, www.googleapis.com (Drive) and oauth2.googleapis.com. */
  url: string;
  /** An access token with the drive.file scope (sees the spreadsheets granted to the app). */
  token: string;
  /** An access token with the drive scope (sees every spreadsheet). */
  driveToken: string;
  sales: SalesSeed | undefined;
  /** In-memory state, with the handles of a person editing in the Sheets UI. */
  state: GoogleSheetsState;
  editCell: GoogleSheetsState['editCell'];
  editRow: GoogleSheetsState['editRow'];
  insertRows: GoogleSheetsState['insertRows'];
  appendRows: GoogleSheetsState['appendRows'];
  deleteRows: GoogleSheetsState['deleteRows'];
  moveRows: GoogleSheetsState['moveRows'];
  moveColumns: GoogleSheetsState['moveColumns'];
  sortRows: GoogleSheetsState['sortRows'];
  values: GoogleSheetsState['values'];
  revokeToken: (token: string) => void;
  faults: FaultInjector;
  requestLog: RequestLog;
  clock: Clock;
  close: () => Promise<void>;
};

export const DRIVE_TOKEN = 'ya29.simulator-drive-scope-token';

export async function startGoogleSheetsSimulator(
  options: StartGoogleSheetsSimulatorOptions = {},
): Promise<GoogleSheetsSimulator> {
  const state = new GoogleSheetsState({
    ...options,
    tokens: [{ token: DRIVE_TOKEN, scopes: [SCOPES.drive] }, ...(options.tokens ?? [])],
  });
  const sales =
    options.seed === false
      ? undefined
      : seedSales(state, typeof options.seed === 'object' ? options.seed : {});
  const server = await startGoogleSheetsServer(state);
  return {
    url: server.url,
    token: DEFAULT_TOKEN,
    driveToken: DRIVE_TOKEN,
    sales,
    state,
    editCell: state.editCell.bind(state),
    editRow: state.editRow.bind(state),
    insertRows: state.insertRows.bind(state),
    appendRows: state.appendRows.bind(state),
    deleteRows: state.deleteRows.bind(state),
    moveRows: state.moveRows.bind(state),
    moveColumns: state.moveColumns.bind(state),
    sortRows: state.sortRows.bind(state),
    values: state.values.bind(state),
    revokeToken: (t) => state.tokens.revoke(t),
    faults: server.faults,
    requestLog: server.requestLog,
    clock: state.clock,
    close: server.close,
  };
}
