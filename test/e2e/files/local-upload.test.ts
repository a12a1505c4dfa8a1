// Uploads as a client sees them through the local HTTP server: a PicGo-style uploader, the bytes at the
// returned url streamed from storage, the limits, the presigned round trip, tokens and the gallery.
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import type { RequestOptions } from '#test/support/http-client.ts';
import { makePng, notAnImage } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let user: TestAccount;

beforeAll(async () => {
  user = await createTestAccount();
});

interface Envelope<T = Record<string, unknown>> {
  code: number;
  message: string;
  data: T;
}

function randomPng(): Buffer {
  const channel = () => Math.floor(Math.random() * 256);
  return makePng(3 + Math.floor(Math.random() * 20), 2 + Math.floor(Math.random() * 20), [
    channel(),
    channel(),
    channel(),
  ]);
}

/** What the PicGo uploader plugin does: multipart `file`, bearer token, success when code === 0 && data.url. */
async function picgoUpload(token: string, bytes: Buffer, name: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), name);
  const response = await app.request('POST', '/api/v1/upload', { token, body: form });
  const body = response.body as Envelope<{ url?: string; key?: string } | null>;
  return { response, body, success: body.code === 0 && Boolean(body.data?.url) };
}

async function json<T>(
  path: string,
  { method = 'GET', ...options }: RequestOptions & { method?: string } = {},
) {
  const { status, body } = await app.request(method, path, options);
  return { status, body: body as Envelope<T> };
}

describe('a PicGo-style client', () => {
  it('uploads with an API token and gets the file back from data.url', async () => {
    // Prepare
    const created = await json<{ token: string }>('/api/v1/tokens', {
      method: 'POST',
      token: user.token,
      body: { name: 'PicGo' },
    });
    const bytes = randomPng();

    // Act
    const { response, body, success } = await picgoUpload(created.body.data.token, bytes, 'screenshot 1.png');
    const url = new URL(body.data?.url ?? 'http://invalid/');
    const served = await fetch(`${app.url}${url.pathname}`);
    const head = await fetch(`${app.url}${url.pathname}`, { method: 'HEAD' });

    // Assess
    expect(created.status).toBe(201);
    expect(response.status).toBe(200);
    expect(success).toBe(true);
    expect(body).toMatchObject({
      code: 0,
      message: 'ok',
      data: { original_name: 'screenshot 1.png', mime_type: 'image/png' },
    });
    expect(url.pathname).toBe(`/i/${body.data?.key}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-length')).toBe(String(bytes.length));
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
  });

  it('sees failure (code !== 0) for a text file named .png: 415', async () => {
    const form = new FormData();
    form.append('file', new Blob([notAnImage], { type: 'image/png' }), 'fake.png');
    const response = await app.request('POST', '/api/v1/upload', { token: user.token, body: form });
    const body = response.body as Envelope<null>;
    expect(response.status).toBe(415);
    expect(body.code).toBe(415);
    expect(body.data).toBeNull();
  });

  it('sees 413 for a file over upload.max_bytes, and 401 without a token', async () => {
    const big = Buffer.concat([randomPng(), Buffer.alloc(4 * 1024 * 1024)]);
    const tooBig = await picgoUpload(user.token, big, 'big.png');
    const anonymous = await fetch(`${app.url}/api/v1/upload`, { method: 'POST', body: new FormData() });
    expect(tooBig.response.status).toBe(413);
    expect(tooBig.success).toBe(false);
    expect(anonymous.status).toBe(401);
  });
});

describe('a direct upload over the limit', () => {
  it('is refused in one wording at 4.2, 9 and 60 MB, whether the handler or the payload limit stops it', async () => {
    const MB = 1_000_000;
    const answers = [];
    for (const size of [4.2 * MB, 9 * MB, 60 * MB]) {
      const { response, body } = await picgoUpload(
        user.token,
        Buffer.concat([randomPng(), Buffer.alloc(size)]),
        'big.png',
      );
      answers.push({ status: response.status, body });
    }

    const limit = 4 * 1024 * 1024;
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 413,
        body: {
          code: 413,
          message: `file: larger than 4 MiB (${limit} bytes); larger files go through the presigned upload (POST /api/v1/upload/presign)`,
          data: { limit_bytes: limit },
        },
      });
    }
  }, 60_000);
});

describe('GET /i/<key> on the local server', () => {
  it('streams the original without a query and renders the thumbnail with one (docs/IMAGES.md)', async () => {
    const bytes = makePng(40, 30, [10, 200, 30]);
    const { body } = await picgoUpload(user.token, bytes, 'green.png');
    const record = body.data as { url: string; thumbnail: string };

    const original = await fetch(`${app.url}${new URL(record.url).pathname}`);
    const thumbnail = await fetch(
      `${app.url}${new URL(record.thumbnail).pathname}${new URL(record.thumbnail).search}`,
    );
    const rendered = Buffer.from(await thumbnail.arrayBuffer());

    expect(Buffer.from(await original.arrayBuffer()).equals(bytes)).toBe(true);
    // A user's bytes never run as this origin's page: no script, no loads, an opaque origin.
    expect(original.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(thumbnail.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    expect(thumbnail.headers.get('x-content-type-options')).toBe('nosniff');
    // 40 wide: never enlarged to 480.
    expect(await sharp(rendered).metadata()).toMatchObject({ format: 'webp', width: 40, height: 30 });
  });

  it('answers 404 envelopes for unknown and malformed keys', async () => {
    for (const path of [
      '/i/2026/01/01/00000000-0000-4000-8000-000000000000-000000000000.png',
      '/i/x',
      '/i/%E0%A4%A',
    ]) {
      const response = await fetch(`${app.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-security-policy'), path).toBe("default-src 'none'; sandbox");
      expect(await response.json()).toMatchObject({ code: 404, data: null });
    }
  });
});

describe('presigned upload over HTTP', () => {
  it('presigns, PUTs to storage with exactly the given headers, confirms and serves the file', async () => {
    const bytes = randomPng();
    const grant = await json<{ key: string; url: string; method: string; headers: Record<string, string> }>(
      '/api/v1/upload/presign',
      {
        method: 'POST',
        token: user.token,
        body: { mime_type: 'image/png', size: bytes.length, filename: 'direct.png' },
      },
    );
    const put = await fetch(grant.body.data.url, {
      method: grant.body.data.method,
      headers: grant.body.data.headers,
      body: bytes,
    });
    const confirmed = await json<{ url: string; key: string; original_name: string }>(
      '/api/v1/upload/confirm',
      {
        method: 'POST',
        token: user.token,
        body: { key: grant.body.data.key },
      },
    );
    const served = await fetch(`${app.url}/i/${confirmed.body.data.key}`);

    expect(grant.status).toBe(200);
    expect(put.status).toBe(200);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data).toMatchObject({ key: grant.body.data.key, original_name: 'direct.png' });
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
  });
});

describe('files and gallery over HTTP', () => {
  it('lists own files and the public gallery', async () => {
    const bytes = randomPng();
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'public.png');
    form.append('permission', 'public');
    const uploaded = (await app.request('POST', '/api/v1/upload', { token: user.token, body: form }))
      .body as Envelope<{ id: string; permission: string }>;

    const mine = await json<{ items: Array<{ id: string }> }>('/api/v1/files?limit=5', { token: user.token });
    const gallery = await json<{ items: Array<{ id: string }>; next_cursor: string | null }>(
      '/api/v1/gallery?limit=1',
    );

    expect(uploaded.data.permission).toBe('public');
    expect(mine.body.data.items[0]?.id).toBe(uploaded.data.id);
    expect(gallery.status).toBe(200);
    expect(gallery.body.data.items.map((item) => item.id)).toEqual([uploaded.data.id]);
  });
});
