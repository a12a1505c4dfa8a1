// Original-name sanitising, stored filename and key formats, the UTC date boundary and created_at's format.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  expiryMark,
  keyExpired,
  newFilenameSuffix,
  ORIGINAL_NAME_MAX_BYTES,
  ownerTagOf,
  ownerTagOfKey,
  parseStorageKey,
  sanitizeOriginalName,
  storageKey,
  storedFilename,
} from '#lib/files/names.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

describe('sanitizeOriginalName', () => {
  it.each([
    ['photo.png', 'photo.png'],
    ['C:\\fakepath\\photo.png', 'photo.png'],
    ['/home/me/pics/photo.png', 'photo.png'],
    ['../../etc/passwd', 'passwd'],
    ['a/b\\c/d.png', 'd.png'],
    ['dir/', 'file'],
    ['..', 'file'],
    ['.', 'file'],
    ['', 'file'],
    ['   ', 'file'],
    ['  spaced name.png  ', 'spaced name.png'],
    ['a\u0000b\u0007c\u001f\u007fd\u0085e.png', 'abcde.png'],
    ['line\r\nbreak.png', 'linebreak.png'],
    ['tab\there.png', 'tabhere.png'],
    ['evil\u202egnp.exe', 'evilgnp.exe'],
    ['lone\ud800surrogate.png', 'lonesurrogate.png'],
    ['cafe\u0301.png', 'caf\u00e9.png'],
    ['照片.png', '照片.png'],
  ])('%j -> %j', (input, expected) => {
    expect(sanitizeOriginalName(input)).toBe(expected);
  });

  it('falls back to file when there is no name', () => {
    expect(sanitizeOriginalName(undefined)).toBe('file');
  });

  it('keeps at most 255 bytes and never cuts a multi-byte character', () => {
    const twoByte = sanitizeOriginalName('é'.repeat(300));
    expect(twoByte).toBe('é'.repeat(127));
    expect(bytes(twoByte)).toBe(254);

    const threeByte = sanitizeOriginalName(`a${'€'.repeat(100)}`);
    expect(threeByte).toBe(`a${'€'.repeat(84)}`);
    expect(bytes(threeByte)).toBe(253);

    const fourByte = sanitizeOriginalName('😀'.repeat(100));
    expect(fourByte).toBe('😀'.repeat(63));
    expect(bytes(fourByte)).toBe(252);

    expect(sanitizeOriginalName('x'.repeat(255))).toBe('x'.repeat(255));
    expect(sanitizeOriginalName('x'.repeat(256))).toBe('x'.repeat(255));
  });

  it('does not split a grapheme (an emoji sequence) at the cut', () => {
    const family = '👨‍👩‍👧'; // 18 bytes, one grapheme
    const name = sanitizeOriginalName(`${'x'.repeat(250)}${family}`);
    expect(name).toBe('x'.repeat(250));
  });

  it('falls back to code points when one grapheme alone is over the limit', () => {
    const zalgo = `a${'\u0301'.repeat(200)}`; // one grapheme of 401 bytes
    const name = sanitizeOriginalName(zalgo);
    expect(bytes(name)).toBeLessThanOrEqual(ORIGINAL_NAME_MAX_BYTES);
    expect(name.startsWith('\u00e1\u0301')).toBe(true); // NFC folds the first accent into á
  });

  it('is idempotent, bounded and free of separators and controls for any input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (input) => {
        const once = sanitizeOriginalName(input);
        expect(sanitizeOriginalName(once)).toBe(once);
        expect(once.length).toBeGreaterThan(0);
        expect(bytes(once)).toBeLessThanOrEqual(ORIGINAL_NAME_MAX_BYTES);
        expect(once).not.toMatch(/[/\\\p{Cc}]/u);
        expect(once).toBe(once.trim());
        expect(Buffer.from(once, 'utf8').toString('utf8')).toBe(once);
      }),
      { numRuns: 500 },
    );
  });
});

describe('stored filename and key', () => {
  const id = '0b9c6f1e-2d3a-4c5b-8e7f-9a0b1c2d3e4f';

  it("suffix is a dash, 14 random lower-case hex digits and the owner's 16-digit tag", () => {
    const suffix = newFilenameSuffix('owner-1');
    expect(suffix).toMatch(/^-[0-9a-f]{30}$/);
    expect(newFilenameSuffix('owner-1')).not.toBe(suffix);
    expect(newFilenameSuffix('owner-1', (size) => Buffer.alloc(size, 0xab))).toBe(
      `-ababababababab${ownerTagOf('owner-1')}`,
    );
  });

  it("an owner's tag is the same for every file of theirs and differs between owners", () => {
    expect(ownerTagOf('owner-1')).toMatch(/^[0-9a-f]{16}$/);
    expect(ownerTagOf('owner-1')).toBe(ownerTagOf('owner-1'));
    expect(ownerTagOf('owner-2')).not.toBe(ownerTagOf('owner-1'));
    // Read from keys of the current layout (14 random digits) and of the one before (12).
    for (const random of ['ababababababab', 'abababababab']) {
      expect(ownerTagOfKey(`2026/11/28/${id}-${random}${ownerTagOf('owner-1')}.png`)).toBe(
        ownerTagOf('owner-1'),
      );
    }
    expect(ownerTagOfKey(`2026/11/28/${id}-abababababab.png`)).toBeUndefined();
  });

  it('parses keys of every layout: untagged, tagged, and spread (14 random digits)', () => {
    const tag = ownerTagOf('owner-1');
    for (const suffix of ['-abababababab', `-abababababab${tag}`, `-ababababababab${tag}`]) {
      expect(parseStorageKey(`2026/11/28/${id}${suffix}.png`)).toMatchObject({ id, suffix, ext: 'png' });
    }
    expect(parseStorageKey(`2026/11/28/${id}-ababababababab.png`)).toBeUndefined();
  });

  it("an expiring file's key carries its end: read back by the edge's check, the owner's tag and the parser", () => {
    const tag = ownerTagOf('owner-1');
    const end = Date.parse('2026-11-29T10:00:00Z') / 1000;
    const key = `2026/11/29/${id}-ababababababab${tag}${expiryMark(end)}.png`;

    expect(expiryMark(end)).toBe(`-x${end.toString(36)}`);
    expect(expiryMark(undefined)).toBe('');
    expect(keyExpired(key, end * 1000 - 1)).toBe(false);
    expect(keyExpired(key, end * 1000)).toBe(true);
    expect(keyExpired(`/${key}`, end * 1000 + 1)).toBe(true);
    // A key with no end never expires at the edge, whatever the time.
    expect(keyExpired(`2026/11/29/${id}-ababababababab${tag}.png`, Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(ownerTagOfKey(key)).toBe(tag);
    expect(parseStorageKey(key)).toMatchObject({
      id,
      suffix: `-ababababababab${tag}${expiryMark(end)}`,
      ext: 'png',
    });
  });

  it('filename is <uuid><suffix>.<ext>', () => {
    expect(storedFilename(id, '-abababababab', 'png')).toBe(`${id}-abababababab.png`);
  });

  it('key is yyyy/mm/dd/<filename> on the UTC date', () => {
    const filename = storedFilename(id, '-abababababab', 'jpg');
    expect(storageKey(new Date('2026-11-21T08:00:00Z'), filename)).toBe(`2026/11/21/${filename}`);
    expect(storageKey(new Date('2026-03-05T00:00:00Z'), 'f.png')).toBe('2026/03/05/f.png');
    // 23:30 in New York on the 21st is already the 22nd in UTC
    expect(storageKey(new Date('2026-11-21T23:30:00-05:00'), 'f.png')).toBe('2026/11/22/f.png');
    // New Year's morning in Shanghai is still the old year in UTC
    expect(storageKey(new Date('2026-01-01T07:59:59.999+08:00'), 'f.png')).toBe('2025/12/31/f.png');
    expect(storageKey(new Date('2026-01-01T08:00:00+08:00'), 'f.png')).toBe('2026/01/01/f.png');
    expect(storageKey(new Date('0999-02-03T00:00:00Z'), 'f.png')).toBe('0999/02/03/f.png');
  });

  it('refuses an invalid date', () => {
    expect(() => storageKey(new Date('nope'), 'f.png')).toThrow(RangeError);
    expect(() => isoWithOffset(new Date('nope'))).toThrow(RangeError);
  });

  it('parses its own keys back and nothing else', () => {
    const key = storageKey(new Date('2026-11-21T08:00:00Z'), storedFilename(id, '-0123456789ab', 'webp'));
    expect(parseStorageKey(key)).toEqual({
      key,
      date: '2026-11-21',
      filename: `${id}-0123456789ab.webp`,
      id,
      suffix: '-0123456789ab',
      ext: 'webp',
    });
    for (const bad of [
      `2026/11/21/${id}.png`,
      `2026/11/21/${id}-0123456789AB.png`,
      `../2026/11/21/${id}-0123456789ab.png`,
      `2026/11/21/${id}-0123456789ab.png/x`,
      `2026/11/21/${id}-0123456789ab.png\n`,
      `2026/11/21/x/${id}-0123456789ab.png`,
    ]) {
      expect(parseStorageKey(bad)).toBeUndefined();
    }
  });
});

describe('isoWithOffset', () => {
  it('is UTC with a numeric offset and whole seconds', () => {
    expect(isoWithOffset(new Date('2026-11-21T08:00:00Z'))).toBe('2026-11-21T08:00:00+00:00');
    expect(isoWithOffset(new Date('2026-11-21T08:00:00.999Z'))).toBe('2026-11-21T08:00:00+00:00');
    expect(isoWithOffset(new Date('2026-11-21T16:00:00+08:00'))).toBe('2026-11-21T08:00:00+00:00');
    expect(isoWithOffset(new Date(0))).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
  });

  it('parses back to the same second', () => {
    const now = new Date('2026-06-30T23:59:59.500Z');
    expect(new Date(isoWithOffset(now)).getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000);
  });
});
