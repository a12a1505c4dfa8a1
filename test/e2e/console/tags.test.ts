// Tags and search in the console, in a real Chromium against `npm start` (docs/UPLOADS.md "Tags and search"):
// an owner adds tags to a file in its lightbox (chips, checked through the API) and removes one, finds files
// by tag and by the beginning of a name in My files; an administrator finds the file by its URL on the files
// moderation page. Screenshotted at 1280 and 360 px and checked with axe-core. Shares harness.ts with the
// other journeys; skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  ADMIN,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  logIn,
  logOut,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the tags and search journey');
const OWNER = newAccount('tagger');

useConsoleService(MISSING);

interface Record {
  id: string;
  url: string;
  tags: string[];
}

let ownerToken = '';
let beach: Record;

async function upload(name: string, colour: [number, number, number]): Promise<Record> {
  const form = new FormData();
  form.append('file', new Blob([makePng(40, 30, colour)], { type: 'image/png' }), name);
  const answer = await apiCall('POST', '/api/v1/upload', ownerToken, form);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data as Record;
}

const grid = (label: string) => page.getByRole('list', { name: label });
const tile = (name: string, label = 'My files') => grid(label).getByRole('button', { name, exact: true });
const lightbox = () => page.getByRole('dialog');

describe('tags and search (npm start, Chromium)', () => {
  it('adds and removes tags in the lightbox, and finds files by tag and by name', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(OWNER);
    await page.goto(`${service.url}/#/login`);
    await logIn(OWNER.username, OWNER.password);
    await heading('My files');
    ownerToken = await consoleSessionToken();
    beach = await upload('beach.png', [30, 120, 200]);
    await upload('city.png', [90, 90, 90]);
    await page.reload();
    await heading('My files');

    await tile('beach.png').click();
    await lightbox().getByLabel('Add tags').fill('Sea, summer');
    await lightbox().getByRole('button', { name: 'Add', exact: true }).click();
    await lightbox().getByRole('list', { name: 'Tags' }).getByText('summer').waitFor();
    await checkPage('tags-lightbox');
    const read = async () => (await apiCall('GET', `/api/v1/files/${beach.id}`, ownerToken)).data.tags;
    await poll(read).toEqual(['sea', 'summer']);
    await lightbox().getByRole('button', { name: 'Remove tag sea' }).click();
    await poll(read).toEqual(['summer']);
    await page.keyboard.press('Escape');

    await page.getByLabel('Find by').selectOption('tag');
    await page.getByLabel('Name or tag').fill('summer');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await poll(() => grid('Files found').getByRole('img').count()).toBe(1);
    await tile('beach.png', 'Files found').waitFor();
    await checkPage('tags-search');

    await page.getByLabel('Find by').selectOption('q');
    await page.getByLabel('Name or tag').fill('CIT');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await tile('city.png', 'Files found').waitFor();
    await poll(() => grid('Files found').getByRole('img').count()).toBe(1);
    await page.getByLabel('Name or tag').fill('nothing');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await page.getByText('No file matches.').waitFor();
    await page.getByRole('button', { name: 'Show all files' }).click();
    await poll(() => grid('My files').getByRole('img').count()).toBe(2);
  }, 180_000);

  it('finds a file by its URL on the files moderation page', async (context) => {
    if (MISSING) context.skip(MISSING);
    await logOut();
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Moderation' }).click();
    await heading('Files moderation');
    await page.getByLabel('Find a file by its URL, key or id').fill(`${beach.url}?p=thumb`);
    await page.getByRole('form', { name: 'Find a file' }).getByRole('button', { name: 'Find' }).click();
    await tile('beach.png', 'Found').waitFor();
    await grid('Found').getByText(OWNER.username).waitFor();
    await checkPage('tags-admin-find');
    await page.getByLabel('Find a file by its URL, key or id').fill('https://example.com/i/nothing.png');
    await page.getByRole('form', { name: 'Find a file' }).getByRole('button', { name: 'Find' }).click();
    await page.getByText(/no file has this URL, key or id/).waitFor();
  }, 180_000);
});
