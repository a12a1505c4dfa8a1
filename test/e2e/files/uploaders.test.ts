// Uploader configurations (docs/ALBUMS.md "Uploader configurations") as the tools use them, through the local
// HTTP server: the ShareX .sxcu the console offers, read field by field as ShareX reads it, uploads a file
// and its URL expression resolves to the file's URL; an API token deletes a file, as clients that sync
// deletions do; the curl and Flameshot commands name the same upload; PicGo's web-uploader configuration,
// sent as that plugin sends it, uploads a small file, and a file over the direct limit is refused with 413
// naming the limit, which the plugin can only report (the console's tokens page says so).
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { curlCommand, flameshotCommand, picgoConfig, sharexFile } from '../../../web/src/uploader-configs.ts';

const app = useLocalApp();
let user: TestAccount;
let token: string;

beforeAll(async () => {
  user = await createTestAccount();
  const created = await app.api('POST', '/api/v1/tokens', { token: user.token, body: { name: 'ShareX' } });
  expect(created.status).toBe(201);
  token = created.data.token;
});

/** ShareX's `{json:a.b}` syntax: the value at that path of the JSON answer. */
function resolveSharexExpression(expression: string, answer: unknown): string {
  return expression.replace(/\{json:([^}]+)\}/g, (_, path: string) => {
    let value: unknown = answer;
    for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
    return String(value);
  });
}

/** What ShareX sends for a custom uploader whose Body is MultipartFormData. */
async function sendAsSharex(sxcuText: string, bytes: Buffer, fileName: string) {
  const uploader = JSON.parse(sxcuText) as Record<string, unknown>;
  expect(uploader.Body).toBe('MultipartFormData');
  const form = new FormData();
  for (const [name, value] of Object.entries((uploader.Arguments as Record<string, string>) ?? {})) {
    form.append(name, value);
  }
  form.append(String(uploader.FileFormName), new Blob([bytes], { type: 'image/png' }), fileName);
  const response = await fetch(String(uploader.RequestURL), {
    method: String(uploader.RequestMethod),
    headers: uploader.Headers as Record<string, string>,
    body: form,
  });
  const answer = (await response.json()) as { code: number; data: { url: string; id: string } };
  return { uploader, response, answer };
}

describe('the ShareX custom uploader (.sxcu)', () => {
  it('uploads a file and resolves URL to the uploaded file, readable at that address', async () => {
    // Prepare
    const sxcu = sharexFile(token, app.url);
    const bytes = makePng(21, 13, [10, 200, 30]);

    // Act
    const { uploader, response, answer } = await sendAsSharex(sxcu.text, bytes, 'capture.png');

    // Assess
    expect(sxcu.name).toMatch(/\.sxcu$/);
    expect(response.status).toBe(200);
    expect(answer.code).toBe(0);
    const url = resolveSharexExpression(String(uploader.URL), answer);
    expect(url).toBe(answer.data.url);
    const served = await fetch(app.at(url));
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    expect(resolveSharexExpression(String(uploader.ErrorMessage), { message: 'nope' })).toBe('nope');
    // The deletion URL opens the console's page that deletes this file (test/e2e/console/newcomer.test.ts).
    expect(resolveSharexExpression(String(uploader.DeletionURL), answer)).toBe(
      `${app.url}/#/files/${answer.data.id}/delete`,
    );
  });
});

describe('deleting by API token', () => {
  it('DELETE /api/v1/files/{id} with an uploader token moves the file to the trash: record and URL 404', async () => {
    const { answer } = await sendAsSharex(sharexFile(token, app.url).text, makePng(9, 9, [1, 2, 3]), 'x.png');

    const deleted = await app.api('DELETE', `/api/v1/files/${answer.data.id}`, { token });

    expect(deleted.status).toBe(200);
    expect(deleted.data).toEqual({ id: answer.data.id, deleted: true });
    expect((await app.api('GET', `/api/v1/files/${answer.data.id}`, { token })).status).toBe(404);
    expect((await fetch(app.at(answer.data.url))).status).toBe(404);
  });
});

describe('curl and Flameshot commands', () => {
  it('post the file part with the token to the upload address', () => {
    for (const command of [curlCommand(token, app.url), flameshotCommand(token, app.url)]) {
      expect(command).toContain(`'Authorization: Bearer ${token}'`);
      expect(command).toContain(`'${app.url}/api/v1/upload'`);
      expect(command).toMatch(/-F 'file=@/);
    }
  });
});

/**
 * What PicGo's web-uploader plugin does with one image (its published handler): a multipart POST of
 * `paramName` with `customHeader`; a non-2xx answer throws inside the handler, which catches it and only
 * emits an "upload failed" notification (with the error, the answer's body included); otherwise `jsonPath`
 * is walked through the JSON answer. It never throws to PicGo, so a refusal leaves `imgUrl` unset.
 */
async function sendAsPicgo(configText: string, bytes: Buffer, fileName: string) {
  const plugin = (JSON.parse(configText) as { picBed: Record<string, Record<string, string>> }).picBed[
    'web-uploader'
  ]!;
  const notifications: { title: string; body: string }[] = [];
  let imgUrl: unknown;
  try {
    const form = new FormData();
    form.append(plugin.paramName!, new Blob([bytes]), fileName);
    const response = await fetch(plugin.url!, {
      method: 'POST',
      headers: JSON.parse(plugin.customHeader!) as Record<string, string>,
      body: form,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${response.status} - ${text}`);
    let value: unknown = JSON.parse(text);
    for (const field of plugin.jsonPath!.split('.')) value = (value as Record<string, unknown>)[field];
    if (value) imgUrl = value;
    else notifications.push({ title: 'parse failed', body: 'check the JSON path' });
  } catch (error) {
    notifications.push({ title: 'upload failed', body: String(error) });
  }
  return { imgUrl, notifications };
}

describe("PicGo's web-uploader configuration", () => {
  it('uploads a file and reads its URL at the configured JSON path', async () => {
    const bytes = makePng(12, 8, [200, 10, 10]);

    const { imgUrl, notifications } = await sendAsPicgo(picgoConfig(token, app.url), bytes, 'shot.png');

    expect(notifications).toEqual([]);
    expect(String(imgUrl)).toMatch(/\/i\//);
    expect((await fetch(app.at(String(imgUrl)))).status).toBe(200);
  });

  it('gets a 413 naming the limit for a photo over the direct limit, and no URL', async () => {
    // A 4.6 MB photo: over upload.max_bytes (4 MiB), the size the tokens page states.
    const photo = Buffer.alloc(4_600_000, 7);

    const { imgUrl, notifications } = await sendAsPicgo(picgoConfig(token, app.url), photo, 'photo.jpg');

    expect(imgUrl).toBeUndefined();
    expect(notifications).toHaveLength(1);
    expect(notifications[0]!.title).toBe('upload failed');
    expect(notifications[0]!.body).toContain('413');
    expect(notifications[0]!.body).toMatch(/limit|larger than/);
  });
});
