// Uploader configurations (docs/ALBUMS.md "Uploader configurations") as the tools use them, through the local
// HTTP server: the ShareX .sxcu the console offers, read field by field as ShareX reads it, uploads a file
// and its URL expression resolves to the file's URL; an API token deletes a file, as clients that sync
// deletions do; the curl and Flameshot commands name the same upload.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { curlCommand, flameshotCommand, sharexFile } from '../../../web/src/uploader-configs.ts';

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
  });
});

describe('deleting by API token', () => {
  it('DELETE /api/v1/files/{id} with an uploader token deletes the record and its bytes', async () => {
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
