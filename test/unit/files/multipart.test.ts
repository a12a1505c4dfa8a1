// parseUploadForm: the one `file` part, text fields, limits and malformed bodies, from a Buffer and a stream.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UploadError } from '#lib/files/errors.ts';
import { MULTIPART_OVERHEAD_BYTES, parseUploadForm } from '#lib/files/multipart.ts';
import { statusOf } from '#lib/http/errors.ts';
import { buildMultipart, png } from '#test/support/images.ts';

/** What a direct upload's 413 adds after the limit: where larger files go. */
const PRESIGN_HINT = '; larger files go through the presigned upload (POST /api/v1/upload/presign)';

const MAX = 4096;

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function chunked(body: Buffer, size: number): Readable {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += size)
    pieces.push(body.subarray(offset, offset + size));
  return Readable.from(pieces, { objectMode: false });
}

async function rejection(promise: Promise<unknown>): Promise<UploadError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UploadError);
  return error as UploadError;
}

describe('parseUploadForm', () => {
  const form = buildMultipart([
    { name: 'permission', data: 'public' },
    { name: 'file', filename: 'cat.png', contentType: 'image/png', data: png.bytes },
  ]);

  it('returns the file bytes, hash, size, names and fields from a Buffer', async () => {
    const parsed = await parseUploadForm({ body: form.body, contentType: form.contentType, maxBytes: MAX });
    expect(parsed.file.bytes.equals(png.bytes)).toBe(true);
    expect(parsed.file.sha256).toBe(sha256(png.bytes));
    expect(parsed.file.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(parsed.file.size).toBe(png.bytes.length);
    expect(parsed.file.originalName).toBe('cat.png');
    expect(parsed.file.clientMimeType).toBe('image/png');
    expect({ ...parsed.fields }).toEqual({ permission: 'public' });
  });

  it('gives the same result from a stream fed one byte at a time', async () => {
    const parsed = await parseUploadForm({
      body: chunked(form.body, 1),
      contentType: form.contentType,
      maxBytes: MAX,
    });
    expect(parsed.file.bytes.equals(png.bytes)).toBe(true);
    expect(parsed.file.sha256).toBe(sha256(png.bytes));
    expect(parsed.fields.permission).toBe('public');
  });

  it('accepts a case-insensitive, quoted-boundary content type', async () => {
    const { body, boundary } = buildMultipart([{ name: 'file', filename: 'a.png', data: png.bytes }]);
    const parsed = await parseUploadForm({
      body,
      contentType: `Multipart/Form-Data; charset=utf-8; boundary="${boundary}"`,
      maxBytes: MAX,
    });
    expect(parsed.file.size).toBe(png.bytes.length);
  });

  it('keeps UTF-8 file names and reduces paths to their last segment', async () => {
    for (const [sent, kept] of [
      ['照片 ü.png', '照片 ü.png'],
      ['C:\\Users\\me\\cat.png', 'cat.png'],
      ['../../etc/passwd', 'passwd'],
      ['', 'file'],
    ] as const) {
      const { body, contentType } = buildMultipart([{ name: 'file', filename: sent, data: png.bytes }]);
      const parsed = await parseUploadForm({ body, contentType, maxBytes: MAX });
      expect(parsed.file.originalName).toBe(kept);
    }
  });

  it('drains and ignores file parts with other names', async () => {
    const { body, contentType } = buildMultipart([
      { name: 'thumb', filename: 't.png', data: Buffer.alloc(1000, 7) },
      { name: 'file', filename: 'a.png', data: png.bytes },
      { name: 'extra', filename: 'e.bin', data: Buffer.alloc(10, 1) },
    ]);
    const parsed = await parseUploadForm({ body, contentType, maxBytes: MAX });
    expect(parsed.file.bytes.equals(png.bytes)).toBe(true);
  });

  describe('content type (415)', () => {
    it.each([
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/mixed; boundary=x',
      'multipart/form-data',
      'multipart/form-data; charset=utf-8',
      '',
    ])('refuses %j', async (contentType) => {
      const error = await rejection(parseUploadForm({ body: form.body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(415);
      expect(error.message).toMatch(/multipart\/form-data/);
    });
  });

  describe('the file part (400)', () => {
    it('is missing', async () => {
      const { body, contentType } = buildMultipart([{ name: 'permission', data: 'private' }]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('file: part is missing');
    });

    it('is missing and names the file parts that were sent instead', async () => {
      const { body, contentType } = buildMultipart([{ name: 'image', filename: 'a.png', data: png.bytes }]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('file: part is missing (file parts seen: "image")');
    });

    it('is a text field, not a file', async () => {
      const { body, contentType } = buildMultipart([{ name: 'file', data: 'just text' }]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(error.message).toBe('file: part is missing');
    });

    it('is empty', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'file', filename: 'a.png', data: Buffer.alloc(0) },
      ]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('file: is empty');
    });

    it('comes twice', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'file', filename: 'a.png', data: png.bytes },
        { name: 'file', filename: 'b.png', data: png.bytes },
      ]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('file: more than one part named file');
    });
  });

  describe('text fields (400)', () => {
    const file = { name: 'file', filename: 'a.png', data: png.bytes };

    it('refuses a value over 512 bytes', async () => {
      const { body, contentType } = buildMultipart([{ name: 'permission', data: 'x'.repeat(513) }, file]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('permission: longer than 512 bytes');
    });

    it('accepts a value of exactly 512 bytes', async () => {
      const { body, contentType } = buildMultipart([{ name: 'note', data: 'x'.repeat(512) }, file]);
      const parsed = await parseUploadForm({ body, contentType, maxBytes: MAX });
      expect(parsed.fields.note).toHaveLength(512);
    });

    it('refuses more than 8 fields', async () => {
      const many = Array.from({ length: 9 }, (_, index) => ({ name: `f${index}`, data: 'v' }));
      const { body, contentType } = buildMultipart([...many, file]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('request: more than 8 text fields');
    });

    it('refuses a repeated field', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'permission', data: 'public' },
        { name: 'permission', data: 'private' },
        file,
      ]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(error.message).toBe('permission: given more than once');
    });

    it('keeps a field named __proto__ as plain data', async () => {
      const { body, contentType } = buildMultipart([{ name: '__proto__', data: 'x' }, file]);
      const parsed = await parseUploadForm({ body, contentType, maxBytes: MAX });
      expect(Object.getPrototypeOf(parsed.fields)).toBeNull();
      expect(Object.entries(parsed.fields)).toEqual([['__proto__', 'x']]);
    });
  });

  describe('size limits (413)', () => {
    const exact = buildMultipart([{ name: 'file', filename: 'a.bin', data: Buffer.alloc(MAX, 1) }]);
    const over = buildMultipart([{ name: 'file', filename: 'a.bin', data: Buffer.alloc(MAX + 1, 1) }]);

    it('accepts a file of exactly maxBytes', async () => {
      const parsed = await parseUploadForm({
        body: exact.body,
        contentType: exact.contentType,
        maxBytes: MAX,
      });
      expect(parsed.file.size).toBe(MAX);
    });

    it('refuses a declared content length over the limit before reading anything', async () => {
      const stream = chunked(over.body, 64);
      const error = await rejection(
        parseUploadForm({
          body: stream,
          contentType: over.contentType,
          maxBytes: MAX,
          contentLength: MAX + MULTIPART_OVERHEAD_BYTES + 1,
        }),
      );
      expect(statusOf(error)).toBe(413);
      expect(error.message).toBe(`file: larger than ${MAX} bytes${PRESIGN_HINT}`);
      expect(error.limitBytes).toBe(MAX);
      expect(stream.readableFlowing).toBeNull();
    });

    it('refuses a Buffer body longer than the limit plus overhead', async () => {
      const body = Buffer.concat([over.body, Buffer.alloc(MULTIPART_OVERHEAD_BYTES)]);
      const error = await rejection(parseUploadForm({ body, contentType: over.contentType, maxBytes: MAX }));
      expect(statusOf(error)).toBe(413);
    });

    it('refuses a file part over the limit mid-stream, without a content length', async () => {
      const error = await rejection(
        parseUploadForm({ body: chunked(over.body, 100), contentType: over.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(413);
      expect(error.message).toBe(`file: larger than ${MAX} bytes${PRESIGN_HINT}`);
    });

    it('stops reading the stream once the file is over the limit', async () => {
      const big = buildMultipart([{ name: 'file', filename: 'a.bin', data: Buffer.alloc(MAX * 100, 1) }]);
      let pulled = 0;
      const pieces = Array.from({ length: Math.ceil(big.body.length / 100) }, (_, index) =>
        big.body.subarray(index * 100, index * 100 + 100),
      );
      const stream = new Readable({
        read() {
          const next = pieces[pulled];
          pulled += 1;
          this.push(next ?? null);
        },
      });
      const error = await rejection(
        parseUploadForm({ body: stream, contentType: big.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(413);
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Paused with data left in its buffer: only the stream's own read-ahead (highWaterMark) was pulled.
      expect(stream.readableFlowing).toBe(false);
      expect(stream.readableLength).toBeGreaterThan(0);
      expect(pulled).toBeLessThan(pieces.length / 10);
    });

    it('refuses a file part over the limit inside a Buffer body', async () => {
      const error = await rejection(
        parseUploadForm({ body: over.body, contentType: over.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(413);
    });

    it('refuses a stream whose ignored parts push the body past the limit plus overhead', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'other', filename: 'x.bin', data: Buffer.alloc(MAX + MULTIPART_OVERHEAD_BYTES, 2) },
        { name: 'file', filename: 'a.png', data: png.bytes },
      ]);
      const error = await rejection(
        parseUploadForm({ body: chunked(body, 4096), contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(413);
    });
  });

  describe('malformed bodies (400)', () => {
    it('refuses a truncated body', async () => {
      const cut = form.body.subarray(0, form.body.length - 40);
      const error = await rejection(
        parseUploadForm({ body: cut, contentType: form.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(400);
      expect(error.message).toMatch(/^request: malformed multipart body/);
    });

    it('refuses a truncated stream', async () => {
      const cut = form.body.subarray(0, 150);
      const error = await rejection(
        parseUploadForm({ body: chunked(cut, 7), contentType: form.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(400);
    });

    it('refuses a body that uses another boundary', async () => {
      const error = await rejection(
        parseUploadForm({
          body: form.body,
          contentType: 'multipart/form-data; boundary=other',
          maxBytes: MAX,
        }),
      );
      expect(statusOf(error)).toBe(400);
    });

    it('refuses a part header without the blank line', async () => {
      const body = Buffer.from(
        `--b\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n${'x'.repeat(20000)}` +
          '\r\n--b--\r\n',
      );
      const error = await rejection(
        parseUploadForm({ body, contentType: 'multipart/form-data; boundary=b', maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(400);
    });

    it('refuses a stream that fails', async () => {
      const stream = new Readable({
        read() {
          this.destroy(new Error('connection reset'));
        },
      });
      const error = await rejection(
        parseUploadForm({ body: stream, contentType: form.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(400);
      expect(error.message).toBe('request: malformed multipart body (the request body could not be read)');
    });

    it('refuses a stream that was already read instead of waiting for it', async () => {
      const stream = Readable.from([form.body], { objectMode: false });
      for await (const _chunk of stream) {
        // drain it
      }
      const error = await rejection(
        parseUploadForm({ body: stream, contentType: form.contentType, maxBytes: MAX }),
      );
      expect(error.message).toBe('request: malformed multipart body (the request body was already read)');
    });

    it('quotes odd field names in messages', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'a b', data: '1' },
        { name: 'a b', data: '2' },
        { name: 'file', filename: 'a.png', data: png.bytes },
      ]);
      const error = await rejection(parseUploadForm({ body, contentType, maxBytes: MAX }));
      expect(error.message).toBe('"a b": given more than once');
    });

    it('refuses an empty body', async () => {
      const error = await rejection(
        parseUploadForm({ body: Buffer.alloc(0), contentType: form.contentType, maxBytes: MAX }),
      );
      expect(statusOf(error)).toBe(400);
    });
  });

  describe('from a real HTTP request', () => {
    async function post(
      body: Buffer,
      contentType: string,
      maxBytes: number,
    ): Promise<{ status: number; text: string }> {
      const server = createServer((request, response) => {
        parseUploadForm({ body: request, contentType: request.headers['content-type'] ?? '', maxBytes }).then(
          (parsed) => response.end(`ok ${parsed.file.sha256}`),
          (error: UploadError) => {
            response.writeHead(statusOf(error), { connection: 'close' });
            response.end(error.message);
          },
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const response = await fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          headers: { 'content-type': contentType },
          body: new Uint8Array(body),
        });
        return { status: response.status, text: await response.text() };
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }

    it('parses the request stream', async () => {
      const result = await post(form.body, form.contentType, MAX);
      expect(result).toEqual({ status: 200, text: `ok ${sha256(png.bytes)}` });
    });

    it('answers 413 for a file over the limit', async () => {
      const big = buildMultipart([{ name: 'file', filename: 'a.bin', data: Buffer.alloc(MAX * 4, 1) }]);
      const result = await post(big.body, big.contentType, MAX);
      expect(result).toEqual({ status: 413, text: `file: larger than ${MAX} bytes${PRESIGN_HINT}` });
    });
  });
});
