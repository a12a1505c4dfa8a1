// Sniffing, measuring and hashing: exact facts for every fixture and 415s for what is not an allowed image.
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { UploadError } from '#lib/files/errors.ts';
import { measureImage } from '#lib/files/measure.ts';
import { IMAGE_KINDS } from '#lib/files/metadata/types.ts';
import { parseUploadForm } from '#lib/files/multipart.ts';
import { inspectUpload } from '#lib/files/record.ts';
import { kindFromMimeType, notAllowedError, sniffImage } from '#lib/files/sniff.ts';
import { statusOf } from '#lib/http/errors.ts';
import { buildMultipart, images, jpegRotated, notAnImage, png } from '#test/support/images.ts';

const ALL = IMAGE_KINDS;
const MAX = 4 * 1024 * 1024;

async function rejection(promise: Promise<unknown>): Promise<UploadError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UploadError);
  return error as UploadError;
}

describe('inspectUpload facts', () => {
  it.each(Object.entries(images))('%s: mime, ext, width, height, size, sha256', async (_name, fixture) => {
    const facts = await inspectUpload(fixture.bytes, { allowed: ALL, maxBytes: MAX });
    expect(facts).toEqual({
      sha256: createHash('sha256').update(fixture.bytes).digest('hex'),
      size: fixture.bytes.length,
      mimeType: fixture.mime,
      ext: fixture.ext,
      kind: fixture.kind,
      width: fixture.width,
      height: fixture.height,
    });
  });

  it('reports the displayed size of a JPEG rotated by EXIF', async () => {
    const facts = await inspectUpload(jpegRotated.bytes, { allowed: ALL, maxBytes: MAX });
    expect([facts.width, facts.height]).toEqual([3, 5]);
  });

  it('uses a hash computed while streaming when given one', async () => {
    const facts = await inspectUpload(png.bytes, { allowed: ALL, maxBytes: MAX, sha256: 'a'.repeat(64) });
    expect(facts.sha256).toBe('a'.repeat(64));
  });

  it('is 400 for no bytes and 413 over maxBytes, with the limit', async () => {
    expect(statusOf(await rejection(inspectUpload(Buffer.alloc(0), { allowed: ALL, maxBytes: MAX })))).toBe(
      400,
    );
    const error = await rejection(inspectUpload(png.bytes, { allowed: ALL, maxBytes: png.bytes.length - 1 }));
    expect(statusOf(error)).toBe(413);
    expect(error.limitBytes).toBe(png.bytes.length - 1);
    expect(error.message).toBe(`file: larger than ${png.bytes.length - 1} bytes`);
    await expect(
      inspectUpload(png.bytes, { allowed: ALL, maxBytes: png.bytes.length }),
    ).resolves.toBeTruthy();
  });

  it('checks the declared type of a presigned upload against the bytes', async () => {
    const gifBytes = images.gif.bytes;
    const error = await rejection(
      inspectUpload(gifBytes, { allowed: ALL, maxBytes: MAX, expectedMimeType: 'image/png' }),
    );
    expect(statusOf(error)).toBe(415);
    expect(error.message).toBe('file: content is image/gif but image/png was declared');
    const jpegFacts = await inspectUpload(images.jpeg.bytes, {
      allowed: ALL,
      maxBytes: MAX,
      expectedMimeType: 'image/jpg',
    });
    expect(jpegFacts.mimeType).toBe('image/jpeg');
    const unknown = await rejection(
      inspectUpload(png.bytes, { allowed: ALL, maxBytes: MAX, expectedMimeType: 'text/plain' }),
    );
    expect(unknown.message).toMatch(/^file: type text\/plain is not allowed; allowed: /);
  });
});

describe('sniffImage', () => {
  it('ignores the client: a text file named .png with type image/png is 415', async () => {
    const { body, contentType } = buildMultipart([
      { name: 'file', filename: 'photo.png', contentType: 'image/png', data: notAnImage },
    ]);
    const parsed = await parseUploadForm({ body, contentType, maxBytes: MAX });
    expect(parsed.file.clientMimeType).toBe('image/png');
    const error = await rejection(inspectUpload(parsed.file.bytes, { allowed: ALL, maxBytes: MAX }));
    expect(statusOf(error)).toBe(415);
    expect(error.message).toBe(
      'file: type unknown is not allowed; allowed: png, jpeg, gif, webp, avif, bmp, ico',
    );
  });

  it('names a recognised type that is not an image', async () => {
    const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n', 'latin1');
    const error = await rejection(sniffImage(pdf, ALL));
    expect(error.message).toBe(
      'file: type application/pdf is not allowed; allowed: png, jpeg, gif, webp, avif, bmp, ico',
    );
  });

  it('says an SVG is never accepted and why (its scripts), with or without an XML prolog', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    for (const text of [svg, `\uFEFF<?xml version="1.0"?>\n<!-- logo -->\n${svg}`]) {
      const error = await rejection(sniffImage(Buffer.from(text), ALL));
      expect(statusOf(error)).toBe(415);
      expect(error.message).toMatch(
        /^file: type image\/svg\+xml is not allowed: SVG can carry scripts that would run on this site \(a stored-XSS risk\)/,
      );
    }
    // Declared before any bytes exist (a presigned upload): the same answer.
    expect(notAllowedError('image/svg+xml', ALL).message).toMatch(/SVG can carry scripts/);
  });

  it('names an image type that the configuration does not allow', async () => {
    const error = await rejection(sniffImage(images.gif.bytes, ['png', 'jpeg']));
    expect(statusOf(error)).toBe(415);
    expect(error.message).toBe('file: type image/gif is not allowed; allowed: png, jpeg');
  });

  it('accepts jpg as a spelling of jpeg in the allow-list', async () => {
    await expect(sniffImage(images.jpeg.bytes, ['jpg'])).resolves.toEqual({
      kind: 'jpeg',
      mimeType: 'image/jpeg',
      ext: 'jpg',
    });
  });

  it('does not take text that starts with BM for a bitmap', async () => {
    const error = await rejection(sniffImage(Buffer.from('BMW owners club: minutes of the meeting\n'), ALL));
    expect(error.message).toMatch(/^file: type unknown is not allowed/);
  });

  it('treats an animated PNG as a PNG', async () => {
    // acTL (2 frames, loop forever) right after IHDR makes it an APNG to file-type.
    const data = Buffer.alloc(8);
    data.writeUInt32BE(2, 0);
    const typeAndData = Buffer.concat([Buffer.from('acTL'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typeAndData));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(8);
    const ihdrEnd = 8 + 25;
    const apng = Buffer.concat([
      png.bytes.subarray(0, ihdrEnd),
      length,
      typeAndData,
      crc,
      png.bytes.subarray(ihdrEnd),
    ]);
    await expect(sniffImage(apng, ['png'])).resolves.toEqual({
      kind: 'png',
      mimeType: 'image/png',
      ext: 'png',
    });
  });

  it('refuses empty and tiny inputs as unknown', async () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from([0xff]), Buffer.from([0x89, 0x50])]) {
      expect(statusOf(await rejection(sniffImage(bytes, ALL)))).toBe(415);
    }
  });
});

describe('kindFromMimeType', () => {
  it('maps declared types, ignoring case and parameters', () => {
    expect(kindFromMimeType('IMAGE/PNG; charset=binary')).toBe('png');
    expect(kindFromMimeType('image/x-icon')).toBe('ico');
    expect(kindFromMimeType('image/svg+xml')).toBeUndefined();
    expect(kindFromMimeType('constructor')).toBeUndefined();
  });
});

describe('measureImage', () => {
  it('is 0/0 and never throws for what it cannot measure', () => {
    for (const bytes of [
      Buffer.alloc(0),
      notAnImage,
      png.bytes.subarray(0, 20), // a view: the full header sits right behind it in memory
      Buffer.concat([png.bytes.subarray(0, 20)]), // a small copy in Node's shared pool
      images.jpeg.bytes.subarray(0, 30),
      Buffer.from('BM'),
      Buffer.from([0xff, 0xd8, 0xff]),
    ]) {
      expect(measureImage(bytes)).toEqual({ width: 0, height: 0 });
    }
  });

  it('measures every fixture', () => {
    for (const fixture of Object.values(images)) {
      expect(measureImage(fixture.bytes)).toEqual({ width: fixture.width, height: fixture.height });
    }
  });
});
