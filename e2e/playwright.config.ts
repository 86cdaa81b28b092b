import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

// Another port when two runs share a machine (a clean-clone check beside a working copy).
const PORT = Number(process.env.LOCKSTEP_E2E_PORT ?? 3100);
// A fresh embedded PostgreSQL for every run, so tests never see an earlier run's users. The config is
// loaded again in each worker (which inherits this variable), so the directory is made only once.
process.env.LOCKSTEP_E2E_DATA_DIR ??= mkdtempSync(path.join(os.tmpdir(), 'lockstep-e2e-'));
const dataDir = process.env.LOCKSTEP_E2E_DATA_DIR;
export const STAFF_EMAIL = 'staff@lockstep.test';

export default defineConfig({
  testDir: './tests',
  outputDir: './artifacts/results',
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      // Debian's chromium; Playwright never downloads a browser here.
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  webServer: {
    // The product as a user starts it: builds the web app, then the server with embedded PostgreSQL.
    command: 'npm start',
    cwd: '..',
    url: `http://127.0.0.1:${PORT}/health`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    env: {
      PORT: String(PORT),
      LOCKSTEP_DATA_DIR: dataDir,
      LOCKSTEP_ENV: 'test',
      LOCKSTEP_PUBLIC_URL: `http://127.0.0.1:${PORT}`,
      LOCKSTEP_STAFF_EMAILS: STAFF_EMAIL,
      LOCKSTEP_SUPPORT_EMAIL: 'help@lockstep.test',
      LOCKSTEP_LOG_LEVEL: 'warn',
    },
  },
});
