import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import pg from 'pg';

const SHOTS = path.resolve(import.meta.dirname, '../artifacts/screenshots');
mkdirSync(SHOTS, { recursive: true });

/** Every screen a test visits is kept as an artifact, to be looked at by a person. */
export async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

export const uniqueEmail = (prefix: string) =>
  `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;

/** Sets a local dev flag before any page script runs. */
export async function setSkipPaywall(page: Page, value: boolean) {
  await page.addInitScript((v) => localStorage.setItem('lockstep.dev.skipPaywall', String(v)), value);
}

export async function signUp(page: Page, email: string, name: string, password = 'correct-horse-42') {
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page).toHaveURL(/\/syncs$/);
}

/** Signs up, or signs in when the account exists already (an earlier test may have made it). */
export async function signUpOrIn(page: Page, email: string, name: string, password = 'correct-horse-42') {
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  const refused = page.getByRole('alert');
  await expect(refused.or(page.getByRole('navigation'))).toBeVisible();
  if (await refused.isVisible()) {
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await expect(page).toHaveURL(/\/syncs$/);
}

/** The embedded PostgreSQL of the server under test, from its data dir (port from postmaster.pid). */
export function demoUrl(database: string): string {
  const dir = process.env.LOCKSTEP_E2E_DATA_DIR as string;
  const port = readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8')
    .split('\n')[3]
    ?.trim();
  const password = readFileSync(path.join(dir, 'pg-password'), 'utf8').trim();
  return `postgres://lockstep:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export async function sql<T = Record<string, unknown>>(
  database: string,
  text: string,
  params: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: demoUrl(database) });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Waits until `read()` gives the expected value (syncs are asynchronous by nature); the time it did. */
export async function eventually<T>(read: () => Promise<T>, expected: T, ms = 20_000): Promise<number> {
  const until = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < until) {
    last = await read();
    if (last === expected) return Date.now();
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`still ${JSON.stringify(last)}, expected ${JSON.stringify(expected)}`);
}
