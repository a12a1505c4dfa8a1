// Names of an upload: the client's name as recorded, the stored filename, its storage key, timestamps.
import { createHash, randomBytes } from 'node:crypto';

export const ORIGINAL_NAME_MAX_BYTES = 255;
const FALLBACK_NAME = 'file';

// Characters that never belong in a displayed name: C0/C1 controls and DEL (they break logs and headers),
// bidirectional overrides and marks (they make `gnp.exe` display as `exe.png`), and lone surrogates
// (not encodable as UTF-8).
function isUnwanted(codePoint: number): boolean {
  return (
    codePoint <= 0x1f ||
    (codePoint >= 0x7f && codePoint <= 0x9f) ||
    codePoint === 0x061c ||
    codePoint === 0x200e ||
    codePoint === 0x200f ||
    (codePoint >= 0x202a && codePoint <= 0x202e) ||
    (codePoint >= 0x2066 && codePoint <= 0x2069) ||
    (codePoint >= 0xd800 && codePoint <= 0xdfff)
  );
}

/**
 * Whether `text` holds a character no displayed name may hold (above): names users give (albums, tokens,
 * plans, passkeys) refuse them (lib/http/schemas/common.ts), where a file's name is cleaned of them.
 */
export function hasUnwantedCharacter(text: string): boolean {
  for (const char of text) if (isUnwanted(char.codePointAt(0) ?? 0)) return true;
  return false;
}

// Built on first use (only for names over the limit): constructing a Segmenter initialises ICU's break
// iterator, about 3 ms that every cold start of the upload and files groups would otherwise pay.
let graphemes: Intl.Segmenter | undefined;

// Longest prefix of whole units (graphemes first, so an accent or emoji sequence is never split; code
// points when a single grapheme is already too long) whose UTF-8 form fits in maxBytes.
function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const cut = (units: Iterable<string>): string => {
    let out = '';
    let used = 0;
    for (const unit of units) {
      const size = Buffer.byteLength(unit, 'utf8');
      if (used + size > maxBytes) break;
      out += unit;
      used += size;
    }
    return out;
  };
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const byGrapheme = cut(Array.from(graphemes.segment(text), (part) => part.segment));
  return byGrapheme.length > 0 ? byGrapheme : cut(text);
}

/**
 * The client's file name as it is recorded (`original_name`): NFC, last path segment for both `/` and `\`,
 * unwanted characters removed, trimmed, at most 255 bytes of UTF-8; `file` when nothing is left.
 * Idempotent. It is only ever displayed, never used as a path.
 */
export function sanitizeOriginalName(name: string | undefined): string {
  if (typeof name !== 'string') return FALLBACK_NAME;
  const segment = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  let cleaned = '';
  for (const char of segment) {
    if (!isUnwanted(char.codePointAt(0) ?? 0)) cleaned += char;
  }
  const result = cutToBytes(cleaned.trim(), ORIGINAL_NAME_MAX_BYTES).trim();
  return result === '' || result === '.' || result === '..' ? FALLBACK_NAME : result;
}

/**
 * The suffix between the uuid and the extension: `-`, 14 random lower-case hex digits (56 bits; 12 before) and the
 * owner's tag (ownerTagOf; files stored before it have none).
 * Why random and not derived: the presign path fixes the key before any bytes exist, so it cannot come
 * from the content; and the uuid is usually the record id, which shows up in API paths, events and logs,
 * while the stored name is the capability that lets anyone fetch the file. The random suffix means that
 * knowing a record id (and guessing its date) is not enough to fetch a private file.
 */
export function newFilenameSuffix(ownerId: string, random: (size: number) => Buffer = randomBytes): string {
  return `-${random(RANDOM_BYTES).toString('hex')}${ownerTagOf(ownerId)}`;
}

/**
 * 7 random bytes (14 hex digits): 48 bits of capability past the two that place the key's bytes in the
 * bucket (lib/platform/storage/object-keys.ts). Names before had 6 (12 digits), and stay where they were.
 */
const RANDOM_BYTES = 7;

/**
 * The owner's tag in a stored name (16 hex digits of a digest of the owner's id): what lets the CDN's edge
 * apply an owner's rules (served or stopped, the Referer allow-list) to a file from its URL alone, with no
 * look-up (lib/platform/cdn/owner-rules.ts). 64 bits, so 10 million owners share none in practice. It tells
 * nothing of the owner, but two URLs with the same tag belong to the same owner (docs/IMAGES.md).
 */
export function ownerTagOf(ownerId: string): string {
  return createHash('sha256').update(`owner-tag:${ownerId}`).digest('hex').slice(0, OWNER_TAG_LENGTH);
}

export const OWNER_TAG_LENGTH = 16;

/**
 * The owner's tag in a stored key, or undefined for a key stored before tags. Self-contained: the CDN's /i/*
 * function embeds its source (infra/edge.ts), so the edge and the local server read a key alike.
 */
export function ownerTagOfKey(key: string): string | undefined {
  const match = /-(?:[0-9a-f]{2})?[0-9a-f]{12}([0-9a-f]{16})(?:-x[0-9a-z]+)?\.[a-z0-9]+$/.exec(key);
  return match === null ? undefined : match[1];
}

/**
 * The end of an expiring upload in its key (docs/UPLOADS.md "Expiring uploads"): `-x` and its epoch seconds
 * in base 36 after the suffix, `<uuid>-<hex>-xt5n0yk.png`; nothing for a file that never expires. It lets
 * the CDN's edge answer 404 past the end with no look-up (keyExpired).
 */
export function expiryMark(expiresAt: number | undefined): string {
  return expiresAt === undefined ? '' : `-x${expiresAt.toString(36)}`;
}

/**
 * Whether the key (a record key, with or without a leading `/`) carries an end at or before `nowMs`, as a
 * record's TTL is read (lib/platform/db/table.ts isExpired). Self-contained: the CDN's /i/* function embeds
 * its source (infra/edge.ts) and the local edge calls it, so both answer an expired key 404 alike.
 */
export function keyExpired(key: string, nowMs: number): boolean {
  const match = /-x([0-9a-z]{1,10})\.[a-z0-9]+$/.exec(key);
  return match !== null && parseInt(match[1] as string, 36) * 1000 <= nowMs;
}

/** `<uuid><suffix>.<ext>`, e.g. `0b9c…e1-4f2a9c01d3b7.png` (the suffix ends with expiryMark's when it expires). */
export function storedFilename(id: string, suffix: string, ext: string): string {
  return `${id}${suffix}.${ext}`;
}

function utcParts(date: Date): { yyyy: string; mm: string; dd: string } {
  if (Number.isNaN(date.getTime())) throw new RangeError('invalid date');
  return {
    yyyy: String(date.getUTCFullYear()).padStart(4, '0'),
    mm: String(date.getUTCMonth() + 1).padStart(2, '0'),
    dd: String(date.getUTCDate()).padStart(2, '0'),
  };
}

/** `yyyy/mm/dd/<filename>` on the UTC date, so every region and server files the same upload alike. */
export function storageKey(date: Date, filename: string): string {
  const { yyyy, mm, dd } = utcParts(date);
  return `${yyyy}/${mm}/${dd}/${filename}`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const STORAGE_KEY = new RegExp(
  String.raw`^(\d{4})/(\d{2})/(\d{2})/(${UUID})(-[0-9a-f]{12}(?:[0-9a-f]{16}|[0-9a-f]{18})?(?:-x[0-9a-z]{1,10})?)\.([a-z]{3,4})$`,
);

export interface ParsedStorageKey {
  key: string;
  /** `yyyy-mm-dd` */
  date: string;
  filename: string;
  id: string;
  suffix: string;
  ext: string;
}

/**
 * The parts of a key this module generates (uuid id, `newFilenameSuffix` suffix), or undefined for anything
 * else. For checking keys that come back from clients (confirm) before touching storage.
 */
export function parseStorageKey(key: string): ParsedStorageKey | undefined {
  const match = STORAGE_KEY.exec(key);
  if (match === null) return undefined;
  const [, yyyy, mm, dd, id, suffix, ext] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { key, date: `${yyyy}-${mm}-${dd}`, filename: key.slice(11), id, suffix, ext };
}
