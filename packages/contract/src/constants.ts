/** Business constants of spec section 9. */
export const LIMIT_DATA_REFRESH_MS = 30_000;
export const TOKEN_REFRESH_MS = 10_000;
export const DEFAULT_SYNC_NAME = 'Untitled Sync';
export const NIL_ID = '00000000-0000-0000-0000-000000000000';
export const NOTIFICATIONS = { autoClose: 4000, limit: 5, width: 440, position: 'bottom-right' } as const;
export const ROUTE_PROGRESS = {
  appearAfterMs: 250,
  stepPercent: 3,
  stepEveryMs: 150,
  capPercent: 90,
} as const;
export const ERROR_DETAILS_BOX = { maxHeight: 400, width: 500 } as const;
export const PLAN_GATED_ROUTES = ['/syncs', '/syncs/new', '/issues', '/operations', '/get-started'] as const;
export const PLAN_GATE_TITLE = 'Choose a plan to get started';
/** Where the auth handler is mounted; `${AUTH_BASE_PATH}/token` gives the Bearer JWT for /rest/*. */
export const AUTH_BASE_PATH = '/api/auth';
/** Image widths a responsive image is offered at, icon sizes, and the default quality (spec section 9). */
export const IMAGE_WIDTHS = [640, 750, 828, 1080, 1200, 1920, 2048, 3840] as const;
export const ICON_SIZES = [16, 32, 48, 64, 96, 128, 256, 384] as const;
export type IconSize = (typeof ICON_SIZES)[number];
export const DEFAULT_IMAGE_QUALITY = 75;
