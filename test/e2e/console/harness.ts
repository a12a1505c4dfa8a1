// What the console's browser journeys share: one `npm start` (scripts/start.ts, each function group in its
// own process, stand-ins of its own) and one Chromium page per test file, the mails npm start sent (from
// its SES stand-in's inbox), plain HTTP beside the page, and the screenshot and axe check of a page
// state. The service, browser and page are live bindings, set by useConsoleService's beforeAll.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '#infra/local/dynamodb-local.ts';
import {
  type Browser,
  horizontalOverflow,
  openBrowser,
  screenshots,
  seriousAccessibilityViolations,
} from '#test/support/browser.ts';
import { httpClient } from '#test/support/http-client.ts';
import { sesInbox } from '#test/support/mail.ts';
import { type StartedService, startService } from '#test/support/start-process.ts';
import { ensureWebBuild } from '../../../scripts/build-web.ts';

/** The administrator infra/config/local.json bootstraps. */
export const ADMIN = { username: 'admin', password: 'change-me-admin-1' };

export let service: StartedService;
export let browser: Browser;
export let page: Page;
export let dataDir: string;
/** Content-Security-Policy reports the page logged; a journey file asserts there were none. */
export const policyViolations: string[] = [];

/**
 * Starts npm start and Chromium before the file's tests and stops both after; skipped when `missing`.
 * `env` adds settings, one variable a key (`MODERATION__HOLD_ABOVE`: docs/DEPLOYMENT.md).
 */
export function useConsoleService(missing: string | undefined, env: Record<string, string> = {}): void {
  beforeAll(async () => {
    if (missing) return;
    dataDir = mkdtempSync(join(tmpdir(), 'console-e2e-'));
    await ensureWebBuild();
    service = await startService({
      DATA_DIR: dataDir,
      APP_CONFIG: 'infra/config/local.json',
      PORT: String(await freePort()),
      ...env,
    });
    browser = await openBrowser();
    page = await browser.context.newPage();
    // A loaded machine (the whole suite at once) can be slow; no step here is about speed.
    page.setDefaultTimeout(60_000);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
}

/** A journey's own account, unique to this run: `<name><run>`, `<name>-<run>@example.test`. */
export function newAccount(name: string, password = 'correct horse battery') {
  const run = Date.now().toString(36);
  return { username: `${name}${run}`, email: `${name}-${run}@example.test`, password };
}

/** A journey file's last test: its pages ran under their Content-Security-Policy without one violation. */
export function itRanWithoutPolicyViolations(missing: string | undefined): void {
  it('ran under its Content-Security-Policy without a single violation', (context) => {
    if (missing) context.skip(missing);
    expect(policyViolations).toEqual([]);
  });
}

/** npm start's inbox (its SES stand-in): every mail sent so far, and the newest code or reset link to one address. */
export const inbox = () => sesInbox(service.inbox);

/** The newest code npm start mailed to `to`. */
export const mailedCode = (to: string) => inbox().codeFor(to);

const serviceClient = httpClient(() => service.url);

/** One API request beside the page: its status and envelope. */
export const apiCall = (
  method: string,
  path: string,
  token?: string,
  body?: object,
  headers: Record<string, string> = {},
) => serviceClient.api(method, path, { token, body, headers });

export async function adminToken(): Promise<string> {
  return (await apiCall('POST', '/admin/auth/login', undefined, ADMIN)).data.token;
}

/** An ordinary account made the way registration works (a mailed code), for journeys that start later. */
export async function registerAccount(user: { username: string; email: string; password: string }) {
  const sent = await apiCall('POST', '/auth/register/code', undefined, { email: user.email });
  expect(sent.status, JSON.stringify(sent)).toBeLessThan(300);
  const code = await mailedCode(user.email);
  const registered = await apiCall('POST', '/auth/register', undefined, { ...user, code });
  expect(registered.status, JSON.stringify(registered)).toBeLessThan(300);
}

/** The tables (and any box) on the page whose content is wider than they are, named by class. */
function innerSidewaysScroll(on: Page): Promise<string[]> {
  return on
    .locator('.table-wrap')
    .evaluateAll((boxes) =>
      boxes
        .filter((box) => box.scrollWidth > box.clientWidth + 1)
        .map((box) => `${box.className}: ${box.scrollWidth} px in ${box.clientWidth}`),
    );
}

/** Screenshots at both widths, no sideways scrolling at 360 px, and no serious axe finding. */
export async function checkPage(name: string): Promise<void> {
  await screenshots(page, name);
  await page.setViewportSize({ width: 360, height: 740 });
  expect(await horizontalOverflow(page), `${name} scrolls sideways at 360 px`).toEqual([]);
  // Nor does any box inside it: a table's actions past an inner sideways scroll are as good as gone.
  expect(
    await innerSidewaysScroll(page),
    `${name} hides content past an inner sideways scroll at 360 px`,
  ).toEqual([]);
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(await seriousAccessibilityViolations(page), `axe on ${name}`).toEqual([]);
}

/** expect.poll with room for a loaded machine (its default gives up after one second). */
export function poll<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 30_000 });
}

export async function heading(text: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: text }).waitFor();
}

/**
 * Logs in on the console's login page, as a person would: one form for users and administrators (the
 * account decides the door, docs/ACCOUNTS.md "Doors").
 */
export async function logIn(username: string, password: string) {
  await heading('Log in');
  await page.getByLabel('Username or e-mail').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

export async function logOut(): Promise<void> {
  await page.getByRole('button', { name: 'Log out', exact: true }).click();
  await heading('Log in');
}

/** The session the console holds (localStorage), to act beside it over plain HTTP. */
export async function consoleSessionToken(): Promise<string> {
  const stored = await page.evaluate(() =>
    (globalThis as unknown as { localStorage: { getItem(key: string): string } }).localStorage.getItem(
      'console.session',
    ),
  );
  return (JSON.parse(stored) as { token: string }).token;
}
