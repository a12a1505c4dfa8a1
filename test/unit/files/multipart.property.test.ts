// Property: whatever bytes arrive as multipart, parseUploadForm settles with a form or an UploadError.
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UploadError } from '#lib/files/errors.ts';
import { parseUploadForm } from '#lib/files/multipart.ts';
import { statusOf } from '#lib/http/errors.ts';
import { buildMultipart, png } from '#test/support/images.ts';

const BOUNDARY = 'XyZ';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

// Pieces that steer random input into busboy's interesting states rather than its "no boundary yet" one.
const fragment = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  fc
    .constantFrom(
      `--${BOUNDARY}\r\n`,
      `\r\n--${BOUNDARY}\r\n`,
      `\r\n--${BOUNDARY}--\r\n`,
      'Content-Disposition: form-data; name="file"; filename="a.png"\r\n',
      'Content-Disposition: form-data; name="permission"\r\n',
      'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E2%82%AC%ZZ\r\n',
      'Content-Type: image/png\r\n',
      'Content-Transfer-Encoding: base64\r\n',
      '\r\n',
      '\r\n\r\n',
    )
    .map((text) => Buffer.from(text, 'latin1')),
);

const body = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
  fc.array(fragment, { maxLength: 24 }).map((parts) => Buffer.concat(parts)),
  // a valid form cut or corrupted at a random place
  fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 8 })).map(([at, noise]) => {
    const { body: valid } = buildMultipart([{ name: 'file', filename: 'a.png', data: png.bytes }], BOUNDARY);
    const cut = at % (valid.length + 1);
    return Buffer.concat([valid.subarray(0, cut), Buffer.from(noise), valid.subarray(cut + noise.length)]);
  }),
);

async function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'ok',
    (error: unknown) => error,
  );
}

describe('parseUploadForm on arbitrary bytes', () => {
  it('resolves or rejects with an UploadError, from a Buffer', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (bytes) => {
        const outcome = await settle(
          parseUploadForm({ body: bytes, contentType: CONTENT_TYPE, maxBytes: 512 }),
        );
        expect(outcome === 'ok' || outcome instanceof UploadError).toBe(true);
        if (outcome instanceof UploadError) expect([400, 413]).toContain(statusOf(outcome));
      }),
      { numRuns: 400 },
    );
  });

  it('resolves or rejects with an UploadError, from a chunked stream', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.integer({ min: 1, max: 64 }), async (bytes, size) => {
        const pieces: Buffer[] = [];
        for (let offset = 0; offset < bytes.length; offset += size)
          pieces.push(bytes.subarray(offset, offset + size));
        const stream = Readable.from(pieces, { objectMode: false });
        const outcome = await settle(
          parseUploadForm({ body: stream, contentType: CONTENT_TYPE, maxBytes: 512 }),
        );
        expect(outcome === 'ok' || outcome instanceof UploadError).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
