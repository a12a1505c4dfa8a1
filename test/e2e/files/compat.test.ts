// The peers' clients (docs/COMPAT.md) through the local HTTP server, each request built as the client's
// published source builds it: PicGo's Lsky Pro plugins (picgo-plugin-lankong and its fork
// picgo-plugin-lskypro-own: `POST <server>/api/v1/upload`, `Authorization` with the token, form fields `file`,
// `ssl`, `strategy_id`, `album_id`, `permission`; success is `status === true`, the URL `data.links.url`, the
// key `data.key` its sync delete sends to `DELETE <server>/api/v1/images/:<key>`), and ShareX's Chevereto
// uploader (fields `key` and `format=json`, file part `source`; it reads `image.url`, `image.url_viewer`,
// `image.thumb.url`; a custom .sxcu also `image.delete_url` and `error.message`).
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let user: TestAccount;
let token: string;

beforeAll(async () => {
  user = await createTestAccount();
  const created = await app.api('POST', '/api/v1/tokens', { token: user.token, body: { name: 'PicGo' } });
  expect(created.status).toBe(201);
  token = created.data.token;
});

/** The plugin's postOptions + handle for one image: `server` is what the user typed in its settings. */
async function sendAsLankong(
  server: string,
  authToken: string,
  bytes: Buffer,
  extra: Record<string, string>,
) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), 'picgo.png');
  form.append('ssl', 'true');
  for (const [name, value] of Object.entries(extra)) form.append(name, value);
  const response = await fetch(`${server}/api/v1/upload`, {
    method: 'POST',
    headers: { 'User-Agent': 'PicGo', Accept: 'application/json', Authorization: authToken },
    body: form,
  });
  const body = JSON.parse(await response.text());
  // The plugin's own test of success, and what it keeps.
  if (body.status !== true) return { response, body, failed: body.message as string };
  return { response, body, imgUrl: body.data.links.url as string, id: body.data.key as string };
}

const bytesAt = async (url: string) => {
  const served = await fetch(app.at(url));
  return {
    status: served.status,
    type: served.headers.get('content-type'),
    bytes: Buffer.from(await served.arrayBuffer()),
  };
};

describe('PicGo Lsky Pro plugin through /compat/lsky', () => {
  it('uploads with a Bearer token and gets data.links.url, which serves the image; sync delete removes it', async () => {
    const bytes = makePng(17, 11, [30, 90, 200]);
    const server = `${app.url}/compat/lsky`;

    const sent = await sendAsLankong(server, `Bearer ${token}`, bytes, { strategy_id: '1', permission: '1' });

    expect(sent.response.status).toBe(200);
    expect(sent.failed).toBeUndefined();
    expect(sent.body.data).toMatchObject({
      origin_name: 'picgo.png',
      mimetype: 'image/png',
      extension: 'png',
      size: Math.round((bytes.length / 1024) * 100) / 100,
      md5: expect.stringMatching(/^[0-9a-f]{32}$/),
      sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(sent.body.data.links.markdown).toBe(`![picgo.png](${sent.imgUrl})`);
    const served = await bytesAt(sent.imgUrl!);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(bytes)).toBe(true);
    // permission=1 is public: in the caller's files as such.
    const record = await app.api('GET', `/api/v1/files/${sent.id}`, { token });
    expect(record.data.permission).toBe('public');

    // picgo-plugin-lankong's GenDeleteParam: DELETE …/api/v1/images/:<key>.
    const deleted = await fetch(`${server}/api/v1/images/:${sent.id}`, {
      method: 'DELETE',
      headers: { Accept: 'application/json', Authorization: `Bearer ${token}` },
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ status: true });
    expect((await bytesAt(sent.imgUrl!)).status).toBe(404);
  });

  it("answers a wrong token in Lsky's error shape, which the plugin reports by its message", async () => {
    const sent = await sendAsLankong(
      `${app.url}/compat/lsky`,
      'Bearer ut_not-a-token',
      makePng(4, 4, [1, 1, 1]),
      {},
    );

    expect(sent.response.status).toBe(401);
    expect(sent.body).toEqual({ status: false, message: expect.any(String), data: {} });
    expect(sent.failed).toBeTruthy();
  });

  it("answers Lsky Pro+'s v2 upload with public_url", async () => {
    const bytes = makePng(6, 5, [9, 9, 9]);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'v2.png');
    form.append('storage_id', '1');

    const response = await fetch(`${app.url}/compat/lsky/api/v2/upload`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      body: form,
    });

    const body = (await response.json()) as { data: { public_url: string } };
    expect(response.status).toBe(200);
    expect(body).toMatchObject({ status: 'success', data: { name: 'v2.png', width: 6, height: 5 } });
    expect((await bytesAt(body.data.public_url)).bytes.equals(bytes)).toBe(true);
  });
});

/** ShareX's Chevereto uploader as a custom .sxcu: the same request and the same JSON paths. */
const cheveretoSxcu = (base: string, key: string) => ({
  DestinationType: 'ImageUploader',
  RequestMethod: 'POST',
  RequestURL: `${base}/compat/chevereto/api/1/upload`,
  Body: 'MultipartFormData',
  Arguments: { key, format: 'json' },
  FileFormName: 'source',
  URL: '{json:image.url}',
  ThumbnailURL: '{json:image.thumb.url}',
  DeletionURL: '{json:image.delete_url}',
  ErrorMessage: '{json:error.message}',
});

function resolveSharex(expression: string, answer: unknown): string {
  return expression.replace(/\{json:([^}]+)\}/g, (_, path: string) => {
    let value: unknown = answer;
    for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
    return String(value);
  });
}

async function sendAsSharex(uploader: ReturnType<typeof cheveretoSxcu>, bytes: Buffer) {
  const form = new FormData();
  for (const [name, value] of Object.entries(uploader.Arguments)) form.append(name, value);
  form.append(uploader.FileFormName, new Blob([bytes], { type: 'image/png' }), 'capture.png');
  const response = await fetch(uploader.RequestURL, { method: uploader.RequestMethod, body: form });
  return { response, answer: (await response.json()) as { error: { message: string } } };
}

describe('ShareX Chevereto uploader through /compat/chevereto', () => {
  it('uploads with the key field; image.url, thumb.url and delete_url work', async () => {
    const bytes = makePng(640, 320, [120, 20, 220]);
    const uploader = cheveretoSxcu(app.url, token);

    const { response, answer } = await sendAsSharex(uploader, bytes);

    expect(response.status).toBe(200);
    expect(answer).toMatchObject({ status_code: 200, status_txt: 'OK', image: { width: 640, height: 320 } });
    const url = resolveSharex(uploader.URL, answer);
    expect((await bytesAt(url)).bytes.equals(bytes)).toBe(true);
    const thumb = await bytesAt(resolveSharex(uploader.ThumbnailURL, answer));
    expect(thumb.status).toBe(200);
    expect(thumb.type).toMatch(/^image\//);

    // The delete link asks first (a preview must not delete), then deletes on the confirmation.
    const deleteUrl = app.at(resolveSharex(uploader.DeletionURL, answer));
    const page = await fetch(deleteUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post">');
    expect((await bytesAt(url)).status).toBe(200);
    const confirmed = await fetch(deleteUrl, { method: 'POST' });
    expect(confirmed.status).toBe(200);
    expect((await bytesAt(url)).status).toBe(404);
    // A forged signature for another file is a 404, never a deletion.
    expect((await fetch(deleteUrl.replace(/\/[^/]+$/, '/AAAA'))).status).toBe(404);
  });

  it('takes the key as X-API-Key and refuses a wrong key and a base64 source in its error shape', async () => {
    const form = new FormData();
    form.append('source', new Blob([makePng(5, 5, [5, 5, 5])]), 'a.png');
    const byHeader = await fetch(`${app.url}/compat/chevereto/api/1/upload`, {
      method: 'POST',
      headers: { 'X-API-Key': token },
      body: form,
    });
    expect(byHeader.status).toBe(200);

    const { response, answer } = await sendAsSharex(
      cheveretoSxcu(app.url, 'ut_wrong'),
      makePng(3, 3, [1, 2, 3]),
    );
    expect(response.status).toBe(401);
    expect(answer).toEqual({
      status_code: 401,
      error: { message: expect.any(String), code: 401 },
      status_txt: 'Unauthorized',
    });
    expect(resolveSharex('{json:error.message}', answer)).toBe(answer.error.message);

    const base64 = new FormData();
    base64.append('key', token);
    base64.append('source', makePng(3, 3, [1, 2, 3]).toString('base64'));
    const refused = await fetch(`${app.url}/compat/chevereto/api/1/upload`, { method: 'POST', body: base64 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /^source: .*base64 and URL sources are not accepted/,
    );
  });
});
