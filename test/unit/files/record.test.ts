// The SPEC 2.3 record from facts, names and the clock; permission parsing; the whole byte pipeline.
import { describe, expect, it } from 'vitest';
import { UploadError } from '#lib/files/errors.ts';
import { IMAGE_KINDS } from '#lib/files/metadata/types.ts';
import { parseUploadForm } from '#lib/files/multipart.ts';
import { newFilenameSuffix, storageKey, storedFilename } from '#lib/files/names.ts';
import { inspectUpload, parsePermission } from '#lib/files/record.ts';
import { buildUploadRecord } from '#lib/files/record-build.ts';
import { statusOf } from '#lib/http/errors.ts';
import { uploadRecordSchema } from '#lib/http/schemas/files.ts';
import { buildMultipart, images } from '#test/support/images.ts';

const ID = '0b9c6f1e-2d3a-4c5b-8e7f-9a0b1c2d3e4f';
const NOW = new Date('2026-11-21T08:00:00.250Z');

describe('buildUploadRecord', () => {
  it('produces exactly the SPEC 2.3 fields', async () => {
    const facts = await inspectUpload(images.png.bytes, { allowed: IMAGE_KINDS, maxBytes: 1024 });
    const filename = storedFilename(ID, '-abababababab', facts.ext);
    const key = storageKey(NOW, filename);
    const record = buildUploadRecord({
      id: ID,
      facts,
      originalName: 'C:\\pics\\cat.png',
      permission: 'private',
      baseUrl: 'https://files.example.com/',
      now: NOW,
      filename,
      key,
    });
    expect(record).toEqual({
      id: ID,
      key: `2026/11/21/${ID}-abababababab.png`,
      url: `https://files.example.com/i/2026/11/21/${ID}-abababababab.png`,
      thumbnail: `https://files.example.com/i/2026/11/21/${ID}-abababababab.png?p=thumb`,
      original_name: 'cat.png',
      filename: `${ID}-abababababab.png`,
      hash: facts.sha256,
      permission: 'private',
      album_id: null,
      tags: [],
      size: images.png.bytes.length,
      mime_type: 'image/png',
      width: 3,
      height: 2,
      created_at: '2026-11-21T08:00:00+00:00',
      expires_at: null,
    });
    expect(Object.keys(record).sort()).toEqual(
      [
        'album_id',
        'created_at',
        'expires_at',
        'filename',
        'hash',
        'height',
        'id',
        'key',
        'mime_type',
        'original_name',
        'permission',
        'size',
        'tags',
        'thumbnail',
        'url',
        'width',
      ].sort(),
    );
    expect(uploadRecordSchema.parse(record)).toEqual(record);
  });

  it('schema refuses extra or mistyped fields', () => {
    const base = {
      id: ID,
      key: '2026/11/21/x.png',
      url: 'http://localhost:3000/i/2026/11/21/x.png',
      thumbnail: 'http://localhost:3000/i/2026/11/21/x.png?p=thumb',
      original_name: 'x.png',
      filename: 'x.png',
      hash: 'a'.repeat(64),
      permission: 'public',
      album_id: null,
      tags: [],
      size: 1,
      mime_type: 'image/png',
      width: 0,
      height: 0,
      created_at: '2026-11-21T08:00:00+00:00',
      expires_at: null,
    };
    expect(uploadRecordSchema.safeParse(base).success).toBe(true);
    expect(uploadRecordSchema.safeParse({ ...base, expires_at: '2026-11-21T09:00:00+00:00' }).success).toBe(
      true,
    );
    expect(uploadRecordSchema.safeParse({ ...base, extra: 1 }).success).toBe(false);
    expect(uploadRecordSchema.safeParse({ ...base, hash: 'A'.repeat(64) }).success).toBe(false);
    expect(uploadRecordSchema.safeParse({ ...base, created_at: '2026-11-21T08:00:00Z' }).success).toBe(false);
    expect(uploadRecordSchema.safeParse({ ...base, permission: 'secret' }).success).toBe(false);
    // A BMP or ICO has no rendition: thumbnail is null, never absent.
    expect(uploadRecordSchema.safeParse({ ...base, thumbnail: null }).success).toBe(true);
    const { thumbnail: _thumbnail, ...withoutThumbnail } = base;
    expect(uploadRecordSchema.safeParse(withoutThumbnail).success).toBe(false);
  });

  it('names no thumbnail for a type the renderer cannot read', async () => {
    const facts = await inspectUpload(images.bmp.bytes, { allowed: IMAGE_KINDS, maxBytes: 4096 });
    const filename = storedFilename(ID, '-abababababab', facts.ext);
    const record = buildUploadRecord({
      id: ID,
      facts,
      originalName: 'old.bmp',
      permission: 'public',
      baseUrl: 'https://files.example.com',
      now: NOW,
      filename,
      key: storageKey(NOW, filename),
    });
    expect(record.thumbnail).toBeNull();
  });
});

describe('parsePermission', () => {
  it('defaults to private and accepts private/public in any case', () => {
    expect(parsePermission(undefined)).toBe('private');
    expect(parsePermission('')).toBe('private');
    expect(parsePermission(' Public ')).toBe('public');
    expect(parsePermission('private')).toBe('private');
  });

  it('is 400 for anything else', () => {
    expect(() => parsePermission('secret')).toThrow(UploadError);
    try {
      parsePermission('secret');
    } catch (error) {
      expect(statusOf(error as UploadError)).toBe(400);
      expect((error as UploadError).message).toBe('permission: must be one of private, public');
    }
  });
});

describe('the whole byte pipeline', () => {
  it.each(Object.entries(images))('%s: form -> facts -> record', async (_name, fixture) => {
    const { body, contentType } = buildMultipart([
      { name: 'permission', data: 'public' },
      {
        name: 'file',
        filename: `upload.${fixture.ext}`,
        contentType: 'application/octet-stream',
        data: fixture.bytes,
      },
    ]);
    const form = await parseUploadForm({ body, contentType, maxBytes: 4 * 1024 * 1024 });
    const facts = await inspectUpload(form.file.bytes, {
      allowed: IMAGE_KINDS,
      maxBytes: 4 * 1024 * 1024,
      sha256: form.file.sha256,
    });
    const filename = storedFilename(ID, newFilenameSuffix('owner-1'), facts.ext);
    const record = buildUploadRecord({
      id: ID,
      facts,
      originalName: form.file.originalName,
      permission: parsePermission(form.fields.permission),
      baseUrl: 'http://localhost:3000',
      now: NOW,
      filename,
      key: storageKey(NOW, filename),
    });
    expect(uploadRecordSchema.parse(record)).toBeTruthy();
    expect(record).toMatchObject({
      original_name: `upload.${fixture.ext}`,
      permission: 'public',
      mime_type: fixture.mime,
      width: fixture.width,
      height: fixture.height,
      size: fixture.bytes.length,
    });
    expect(record.filename).toMatch(new RegExp(`^${ID}-[0-9a-f]{30}\\.${fixture.ext}$`));
  });
});
