// The console's files grid in a real Chromium against `npm start`: the lightbox opened by a click and by
// Enter on a tile, arrowed to the next file, its Markdown link, Escape giving focus back to the tile, and
// read-only in the gallery; a selection of two made unlisted, moved into an album and moved to the trash in
// bulk, one restored from My files' Trash and the trash emptied (each checked through the API); and moderation naming each file's owner, filtering by one owner, taking
// down in bulk and loading more pages. The grid, the lightbox and the selection bar are screenshotted at 1280 and 390 px (no sideways scroll at 360) and
// checked with axe-core. Shares harness.ts with the other journeys; skips itself, saying why, when
// Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the files grid journey');
const OWNER = newAccount('gridder');
const OTHER = newAccount('other');
/** Uploaded oldest first, so the grid (newest first) shows them in reverse. */
const NAMES = ['red.png', 'green.png', 'blue.png', 'grey.png'];
const COLOURS: [number, number, number][] = [
  [200, 40, 40],
  [40, 160, 60],
  [40, 60, 200],
  [120, 120, 120],
];

useConsoleService(MISSING);

interface Record {
  id: string;
  original_name: string;
  url: string;
  permission: string;
  album_id: string | null;
}

let ownerToken = '';
let otherToken = '';

async function upload(token: string, name: string, colour: [number, number, number], permission = 'public') {
  const form = new FormData();
  form.append('file', new Blob([makePng(48, 32, colour)], { type: 'image/png' }), name);
  form.append('permission', permission);
  const answer = await apiCall('POST', '/api/v1/upload', token, form);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data as Record;
}

/** A session of the account's own beside the page's (logging out of the page ends the page's). */
async function loginToken(user: { username: string; password: string }): Promise<string> {
  const answer = await apiCall('POST', '/auth/login', undefined, user);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data.token;
}

async function ownFiles(token: string): Promise<Map<string, Record>> {
  const listed = await apiCall('GET', '/api/v1/files?limit=100', token);
  return new Map((listed.data.items as Record[]).map((item) => [item.original_name, item]));
}

const grid = (label = 'My files') => page.getByRole('list', { name: label });
const tile = (name: string, label?: string) => grid(label).getByRole('button', { name, exact: true });
const lightbox = () => page.getByRole('dialog');

describe('the files grid (npm start, Chromium)', () => {
  it('opens the lightbox by click and by Enter, arrows to the next file, shows its links, and Escape gives focus back', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(OWNER);
    await registerAccount(OTHER);
    await page.goto(`${service.url}/#/login`);
    await logIn(OWNER.username, OWNER.password);
    await heading('My files');
    ownerToken = await consoleSessionToken();
    for (const [index, name] of NAMES.entries()) await upload(ownerToken, name, COLOURS[index]!);
    otherToken = await loginToken(OTHER);
    await upload(otherToken, 'theirs.png', [250, 200, 20]);
    const records = await ownFiles(ownerToken);

    await page.reload();
    await heading('My files');
    await tile('grey.png').waitFor();
    expect(await grid().getByRole('img').count()).toBe(NAMES.length);
    await checkPage('files-grid');

    // A click opens the lightbox on that file: a larger rendition, never the original.
    await tile('blue.png').click();
    await lightbox().getByRole('heading', { name: 'blue.png' }).waitFor();
    const picture = lightbox().getByRole('img', { name: 'blue.png' });
    expect(await picture.getAttribute('src')).toBe(`${records.get('blue.png')!.url}?p=medium`);
    await checkPage('files-lightbox');

    // The arrow key goes to the next file (the grid's order: newest first), and the links follow it.
    await page.keyboard.press('ArrowRight');
    await lightbox().getByRole('heading', { name: 'green.png' }).waitFor();
    const markdown = await lightbox().getByLabel('Markdown link of green.png').inputValue();
    expect(markdown).toBe(`![green.png](${records.get('green.png')!.url})`);
    await lightbox().getByRole('button', { name: 'Copy Markdown link' }).click();
    await lightbox()
      .getByText(/Markdown copied|Select the link and copy it/)
      .waitFor();
    await lightbox()
      .getByRole('button', { name: /Previous/ })
      .click();
    await lightbox().getByRole('heading', { name: 'blue.png' }).waitFor();

    await page.keyboard.press('Escape');
    await poll(() => lightbox().count()).toBe(0);
    await poll(() =>
      page.evaluate(
        () =>
          (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement
            .id,
      ),
    ).toBe(`tile-${records.get('blue.png')!.id}`);

    // Enter on a focused tile opens it too.
    await tile('red.png').focus();
    await page.keyboard.press('Enter');
    await lightbox().getByRole('heading', { name: 'red.png' }).waitFor();
    await lightbox().getByRole('button', { name: 'Close' }).click();
    await poll(() => lightbox().count()).toBe(0);

    // The gallery's grid is read-only: the links, no selection, no owner's controls.
    await page.getByRole('link', { name: 'Gallery' }).click();
    await heading('Public gallery');
    await tile('blue.png', 'Public files').click();
    await lightbox().getByLabel('URL link of blue.png').waitFor();
    expect(await lightbox().getByLabel('Visibility').count()).toBe(0);
    expect(
      await lightbox()
        .getByRole('button', { name: /Delete/ })
        .count(),
    ).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    await checkPage('gallery-lightbox');
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'My files' }).click();
    await heading('My files');
  }, 300_000);

  it('makes two selected files unlisted, moves them into an album and to the trash in bulk; restores one, empties the trash', async (context) => {
    if (MISSING) context.skip(MISSING);
    const album = await apiCall('POST', '/api/v1/albums', ownerToken, { name: 'Picked' });
    expect(album.status).toBe(201);
    await page.reload();
    await heading('My files');

    await grid().getByRole('checkbox', { name: 'Select red.png' }).check();
    await grid().getByRole('checkbox', { name: 'Select green.png' }).check();
    const bar = page.getByRole('region', { name: 'Selection' });
    await bar.getByText('2 selected').waitFor();
    await checkPage('files-selection');

    await bar.getByRole('button', { name: 'Make unlisted' }).click();
    await page.getByText('2 updated').waitFor();
    let records = await ownFiles(ownerToken);
    expect(records.get('red.png')!.permission).toBe('private');
    expect(records.get('green.png')!.permission).toBe('private');
    expect(records.get('blue.png')!.permission).toBe('public');

    // The selection was done with; choose the two again and move them.
    await grid().getByRole('checkbox', { name: 'Select red.png' }).check();
    await grid().getByRole('checkbox', { name: 'Select green.png' }).check();
    await bar.getByLabel('Move to album').selectOption({ label: 'Picked' });
    await bar.getByRole('button', { name: 'Move' }).click();
    await page.getByText('2 moved').waitFor();
    records = await ownFiles(ownerToken);
    expect(records.get('red.png')!.album_id).toBe(album.data.id);
    expect(records.get('green.png')!.album_id).toBe(album.data.id);
    expect(records.get('blue.png')!.album_id).toBeNull();

    await grid().getByRole('checkbox', { name: 'Select red.png' }).check();
    await grid().getByRole('checkbox', { name: 'Select green.png' }).check();
    await bar.getByRole('button', { name: 'Delete…' }).click();
    await bar.getByRole('button', { name: 'Move 2 files to the trash' }).click();
    await page.getByText('2 deleted').waitFor();
    records = await ownFiles(ownerToken);
    expect([...records.keys()].sort()).toEqual(['blue.png', 'grey.png']);
    await poll(() => grid().getByRole('img').count()).toBe(2);

    // The trash (docs/UPLOADS.md "Trash"): both listed; one restored to the grid, the other deleted for good.
    const trash = page.getByRole('region', { name: 'Trash' });
    await trash.getByRole('button', { name: 'Restore red.png' }).click();
    await page.getByText('red.png restored').waitFor();
    await poll(() => grid().getByRole('img').count()).toBe(3);
    await trash.getByRole('button', { name: 'Empty the trash' }).click();
    await page.getByText('The trash is emptied').waitFor();
    await trash.getByText('The trash is empty.').waitFor();
    const trashed = await apiCall('GET', '/api/v1/files/trash', ownerToken);
    expect(trashed.data.items).toEqual([]);
    records = await ownFiles(ownerToken);
    expect([...records.keys()].sort()).toEqual(['blue.png', 'grey.png', 'red.png']);
    // Back to the two files the next journey expects: red.png deleted for good through the API.
    const red = records.get('red.png')!.id;
    expect((await apiCall('DELETE', `/api/v1/files/${red}`, ownerToken)).status).toBe(200);
    expect((await apiCall('DELETE', `/api/v1/files/trash/${red}`, ownerToken)).status).toBe(200);
  }, 180_000);

  it('moderation names each owner, filters by one, and takes down in bulk', async (context) => {
    if (MISSING) context.skip(MISSING);
    await logOut();
    ownerToken = await loginToken(OWNER);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Moderation' }).click();
    await heading('Files moderation');
    const all = grid('All files');
    const ownersTile = all.locator('li.tile', {
      has: page.getByRole('button', { name: 'grey.png', exact: true }),
    });
    await ownersTile.getByText(OWNER.username).waitFor();
    const theirs = all.locator('li.tile', {
      has: page.getByRole('button', { name: 'theirs.png', exact: true }),
    });
    await theirs.getByText(OTHER.username).waitFor();
    await checkPage('moderation-grid');

    // The owner's name filters the grid to that owner's files.
    await ownersTile.getByRole('button', { name: `Show only files of ${OWNER.username}` }).click();
    const filtered = grid(`Files of ${OWNER.username}`);
    await filtered.getByRole('button', { name: 'grey.png', exact: true }).waitFor();
    expect(await filtered.getByRole('img').count()).toBe(2);
    expect(await filtered.getByRole('button', { name: 'theirs.png', exact: true }).count()).toBe(0);
    expect(page.url()).toContain('owner_id=');

    // The lightbox names the owner too.
    await filtered.getByRole('button', { name: 'blue.png', exact: true }).click();
    await lightbox().getByText(`Owner: ${OWNER.username}`).waitFor();
    expect(await lightbox().getByLabel('Album').count()).toBe(0);
    await checkPage('moderation-lightbox');
    await lightbox().getByRole('button', { name: 'Close' }).click();

    await page.getByLabel('Select all on this page').check();
    const bar = page.getByRole('region', { name: 'Selection' });
    await bar.getByText('2 selected').waitFor();
    await bar.getByRole('button', { name: 'Take down…' }).click();
    await bar.getByRole('button', { name: 'Take down 2 files for good' }).click();
    await page.getByText('2 taken down').waitFor();
    expect([...(await ownFiles(ownerToken)).keys()]).toEqual([]);
    expect([...(await ownFiles(otherToken)).keys()]).toEqual(['theirs.png']);
    await page.getByText('This owner has no files.').waitFor();

    await page.getByRole('button', { name: 'Clear filter' }).click();
    await grid('All files').getByRole('button', { name: 'theirs.png', exact: true }).waitFor();
    // The filter offers the owners seen so far by name.
    await page.getByLabel('Filter by owner').selectOption({ label: OTHER.username });
    await grid(`Files of ${OTHER.username}`)
      .getByRole('button', { name: 'theirs.png', exact: true })
      .waitFor();
    expect(await grid(`Files of ${OTHER.username}`).getByRole('img').count()).toBe(1);
    const admin = await adminToken();
    const listed = await apiCall('GET', '/api/v1/admin/files?limit=100', admin);
    expect(listed.data.items.find((item: Record) => item.original_name === 'theirs.png')).toMatchObject({
      owner_username: OTHER.username,
    });
  }, 180_000);

  it('moderation pages on: "Load more" appends the next page of every file', async (context) => {
    if (MISSING) context.skip(MISSING);
    // Sixty more (the console asks for 60 a page): with theirs.png, 61 in all.
    const pending = Array.from({ length: 60 }, (_, index) => index);
    const uploader = async () => {
      for (let index = pending.shift(); index !== undefined; index = pending.shift()) {
        await upload(otherToken, `more-${index}.png`, [index, 255 - index, 90], 'private');
      }
    };
    await Promise.all([uploader(), uploader(), uploader()]);
    await page.getByRole('button', { name: 'Clear filter' }).click();
    const all = grid('All files');
    await poll(() => all.getByRole('listitem').count()).toBe(60);

    await page.getByRole('button', { name: 'Load more' }).click();

    await poll(() => all.getByRole('listitem').count()).toBe(61);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
