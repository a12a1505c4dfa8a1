// The console's Webhooks page in a real Chromium against `npm start` (through harness.ts): an endpoint on a
// receiver at 127.0.0.1 added with its secret shown once, an upload delivered to it signed (through npm
// start's own outbox drain on the table's stream), its delivery listed, the endpoint turned off and deleted.
// Skips itself, saying why, when Chromium is absent.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  logIn,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console webhooks journey');
const USER = newAccount('hooked');
const received: Array<{ signature: string; body: string }> = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({
      signature: String(request.headers['webhook-signature']),
      body: Buffer.concat(chunks).toString(),
    });
    response.end('ok');
  });
});

useConsoleService(MISSING);
beforeAll(() => new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)));
afterAll(() => receiver.close());

describe('web console webhooks (npm start, Chromium)', () => {
  it('adds an endpoint showing its secret once, delivers a signed upload to it, lists it, deletes it', async (context) => {
    if (MISSING) context.skip(MISSING);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    await registerAccount(USER);
    await page.goto(`${service.url}/`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await heading('Webhooks');

    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('order.paid').uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await checkPage('webhooks');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await expect.poll(() => page.getByLabel('Signing secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('cell', { name: url, exact: true }).waitFor();

    const form = new FormData();
    form.append('file', new Blob([makePng(20, 10, [10, 200, 30])], { type: 'image/png' }), 'hooked.png');
    const uploaded = await apiCall('POST', '/api/v1/upload', await consoleSessionToken(), form);
    expect(uploaded.status).toBe(200);
    await poll(() => received.length).toBe(1);
    const [t, v1] = received[0]!.signature.split(',').map((part) => part.split('=')[1]!);
    expect(createHmac('sha256', secret).update(`${t}.${received[0]!.body}`).digest('hex')).toBe(v1);
    expect(JSON.parse(received[0]!.body)).toMatchObject({
      type: 'file.uploaded',
      data: { id: uploaded.data.id },
    });

    await page.getByRole('button', { name: `Deliveries of ${url}` }).click();
    const deliveries = page.getByRole('region', { name: `Deliveries to ${url}` });
    await deliveries.getByRole('cell', { name: 'file.uploaded' }).waitFor();
    await expect.poll(() => deliveries.getByRole('cell', { name: 'delivered' }).count()).toBe(1);

    await page.getByRole('button', { name: `Turn off ${url}` }).click();
    await page.getByText('Endpoint turned off').waitFor();
    await page.getByRole('button', { name: `Turn on ${url}` }).waitFor();

    await page.getByRole('button', { name: `Delete ${url}` }).click();
    await page.getByText('Endpoint deleted').waitFor();
    await page.getByText('No webhook endpoints yet.').waitFor();
  });
});
