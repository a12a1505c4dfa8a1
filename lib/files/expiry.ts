// Expiring uploads (docs/UPLOADS.md "Expiring uploads"): `expires_in` (seconds) or `expires_at` (an ISO
// time) on any upload path. The record keeps the end as the table's TTL attribute (epoch seconds), so every
// read treats the file as gone at once past it (lib/platform/db/table.ts); its purge mark (purge-items.ts)
// has the sweep delete its bytes and renditions within minutes.
import { isoWithOffset } from '#lib/platform/time.ts';
import { UploadError } from './errors.ts';

export const EXPIRY_MIN_SECONDS = 60;
/** Ten years: past it a client means "never", and leaving the field out says so. */
export const EXPIRY_MAX_SECONDS = 10 * 365 * 24 * 60 * 60;

export interface ExpiryFields {
  expires_in?: string | number | undefined;
  expires_at?: string | undefined;
}

const bad = (field: string, message: string) => new UploadError('bad_request', `${field}: ${message}`);
const given = (value: string | number | undefined) => value !== undefined && String(value).trim() !== '';

/**
 * The end the upload asked for, in epoch seconds; undefined when it asked for none. 400 naming the field
 * when both are given, when one is not a number or an ISO time, or falls outside one minute to ten years.
 */
export function parseExpiry(fields: ExpiryFields, now: Date): number | undefined {
  const [byIn, byAt] = [given(fields.expires_in), given(fields.expires_at)];
  if (byIn && byAt) throw bad('expires_in', 'give expires_in or expires_at, not both');
  let field = 'expires_in';
  let seconds: number;
  if (byIn) {
    const text = String(fields.expires_in).trim();
    if (!/^\d{1,12}$/.test(text)) throw bad(field, 'must be a whole number of seconds');
    seconds = Number(text);
  } else if (byAt) {
    field = 'expires_at';
    const text = String(fields.expires_at).trim();
    const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) throw bad(field, 'must be an ISO 8601 time, e.g. 2030-01-01T00:00:00Z');
    seconds = Math.floor((at - now.getTime()) / 1000);
    if (seconds <= 0) throw bad(field, 'is in the past');
  } else {
    return undefined;
  }
  if (seconds < EXPIRY_MIN_SECONDS || seconds > EXPIRY_MAX_SECONDS) {
    throw bad(field, `must be between ${EXPIRY_MIN_SECONDS} seconds and 10 years from now`);
  }
  return Math.floor(now.getTime() / 1000) + seconds;
}

/**
 * An upload's end: the one it asked for (always, even one later than its plan's default), else its plan's
 * default retention (`retention_days` of the owner's active grant) counted from `now`; undefined: never.
 */
export function expiryOrDefault(
  asked: number | undefined,
  now: Date,
  retentionDays?: number,
): number | undefined {
  if (asked !== undefined || !retentionDays) return asked;
  return Math.floor(now.getTime() / 1000) + retentionDays * 24 * 60 * 60;
}

/** The record's `expires_at` on the wire: the stored epoch seconds as ISO, or null. */
export function expiryOnWire(expiresAt: unknown): string | null {
  return typeof expiresAt === 'number' ? isoWithOffset(new Date(expiresAt * 1000)) : null;
}
