// The README's console screenshots, from real photos (`npm run screenshots:readme -- <folder>`): starts
// `npm start` on a data folder of its own, registers an account the way a person does (the mailed code from
// its SES stand-in), uploads every JPEG and PNG of the folder (public, in name order) and draws My files at 1280
// and 390 px and the lightbox at 1280 into docs/images/. The README's were made from scikit-image's sample
// photos (public domain or CC0: the astronaut, the coffee, the cat Chelsea, the rocket, the Hubble deep
// field, the motorcycle).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { browserMissing, openBrowser } from './browser.ts';
import { httpClient } from './http-client.ts';
import { sesInbox } from './mail.ts';
import { startService } from './start-process.ts';

const TYPES: Record<string, string> = { '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png' };
const OUT = resolve('docs/images');
const USER = { username: 'ada', email: 'ada@example.test', password: 'correct horse battery' };

async function main(folder: string | undefined): Promise<void> {
  if (!folder) throw new Error('Name a folder of photos: npm run screenshots:readme -- <folder>');
  const missing = browserMissing('the README screenshots');
  if (missing) throw new Error(missing);
  const photos = readdirSync(folder)
    .filter((name) => TYPES[extname(name).toLowerCase()])
    .sort();
  if (photos.length === 0) throw new Error(`${folder} holds no .jpg, .jpeg or .png file`);

  const dataDir = mkdtempSync(join(tmpdir(), 'readme-screenshots-'));
  const service = await startService({
    DATA_DIR: dataDir,
    APP_CONFIG: 'infra/config/local.json',
    PORT: String(await freePort()),
  });
  const browser = await openBrowser();
  try {
    const client = httpClient(() => service.url);
    await client.api('POST', '/auth/register/code', { body: { email: USER.email } });
    const code = await sesInbox(service.inbox).codeFor(USER.email);
    await client.api('POST', '/auth/register', { body: { ...USER, code } });
    const { token } = (await client.api('POST', '/auth/login', { body: USER })).data as { token: string };
    for (const name of photos) {
      const form = new FormData();
      const type = TYPES[extname(name).toLowerCase()]!;
      form.append('file', new Blob([readFileSync(join(folder, name))], { type }), name);
      form.append('permission', 'public');
      const answer = await client.api('POST', '/api/v1/upload', { token, body: form });
      if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${answer.raw}`);
    }

    const page = await browser.context.newPage();
    await page.goto(`${service.url}/#/login`);
    await page.getByLabel('Username or e-mail').fill(USER.username);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'My files' }).waitFor();
    const grid = page.getByRole('list', { name: 'My files' });
    await grid
      .getByRole('img')
      .nth(photos.length - 1)
      .waitFor();
    await settle(page);
    await page.screenshot({ path: join(OUT, 'console-files.png') });

    await page.setViewportSize({ width: 390, height: 844 });
    await settle(page);
    await page.screenshot({ path: join(OUT, 'console-files-phone.png') });
    await page.setViewportSize({ width: 1280, height: 800 });

    await grid.getByRole('button', { name: photos[0]!, exact: true }).click();
    await page.getByRole('dialog').getByRole('img', { name: photos[0]! }).waitFor();
    await settle(page);
    await page.screenshot({ path: join(OUT, 'console-lightbox.png') });
    console.info(`Wrote console-files.png, console-files-phone.png and console-lightbox.png to ${OUT}`);
  } finally {
    await browser.close();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Until every picture on the page has loaded (they load lazily, and the renderer makes them on demand). */
async function settle(page: import('playwright-core').Page): Promise<void> {
  await page.waitForFunction(() =>
    [
      ...(
        globalThis as unknown as {
          document: { images: Iterable<{ complete: boolean; naturalWidth: number; loading: string }> };
        }
      ).document.images,
    ].every((image) => image.complete && image.naturalWidth > 0),
  );
  await page.waitForTimeout(300);
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
