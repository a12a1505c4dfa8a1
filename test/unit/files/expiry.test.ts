// An upload's end (docs/UPLOADS.md "Expiring uploads"): expires_in or expires_at, one minute to ten years,
// as epoch seconds; anything else 400 naming the field.
import { describe, expect, it } from 'vitest';
import type { UploadError } from '#lib/files/errors.ts';
import { EXPIRY_MAX_SECONDS, expiryOnWire, parseExpiry } from '#lib/files/expiry.ts';
import { statusOf } from '#lib/http/errors.ts';

const NOW = new Date('2026-11-21T08:00:00.400Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);

/** The 400's message of a refused value. */
function refusal(fields: Parameters<typeof parseExpiry>[0]): string {
  try {
    parseExpiry(fields, NOW);
  } catch (error) {
    expect(statusOf(error as UploadError)).toBe(400);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('parseExpiry', () => {
  it('gives the end in epoch seconds from expires_in (a field or a number) or expires_at, none when absent', () => {
    expect(parseExpiry({}, NOW)).toBeUndefined();
    expect(parseExpiry({ expires_in: '', expires_at: ' ' }, NOW)).toBeUndefined();
    expect(parseExpiry({ expires_in: '60' }, NOW)).toBe(NOW_S + 60);
    expect(parseExpiry({ expires_in: 3600 }, NOW)).toBe(NOW_S + 3600);
    expect(parseExpiry({ expires_in: String(EXPIRY_MAX_SECONDS) }, NOW)).toBe(NOW_S + EXPIRY_MAX_SECONDS);
    expect(parseExpiry({ expires_at: '2026-11-21T09:00:00Z' }, NOW)).toBe(NOW_S + 3599);
    expect(parseExpiry({ expires_at: '2026-11-21T10:00:00+01:00' }, NOW)).toBe(NOW_S + 3599);
    expect(expiryOnWire(NOW_S + 60)).toBe('2026-11-21T08:01:00+00:00');
    expect(expiryOnWire(undefined)).toBeNull();
  });

  it('refuses both, bad values, the past and ends outside one minute to ten years, naming the field', () => {
    expect(refusal({ expires_in: '60', expires_at: '2030-01-01T00:00:00Z' })).toBe(
      'expires_in: give expires_in or expires_at, not both',
    );
    expect(refusal({ expires_in: '1.5' })).toBe('expires_in: must be a whole number of seconds');
    expect(refusal({ expires_in: -60 })).toBe('expires_in: must be a whole number of seconds');
    expect(refusal({ expires_in: '59' })).toMatch(/^expires_in: must be between 60 seconds and 10 years/);
    expect(refusal({ expires_in: String(EXPIRY_MAX_SECONDS + 1) })).toMatch(/^expires_in: must be between/);
    expect(refusal({ expires_at: '1700000000' })).toMatch(/^expires_at: must be an ISO 8601 time/);
    expect(refusal({ expires_at: '2026-11-21T07:59:00Z' })).toBe('expires_at: is in the past');
    expect(refusal({ expires_at: '2026-11-21T08:00:30Z' })).toMatch(/^expires_at: must be between/);
    expect(refusal({ expires_at: '2040-01-01T00:00:00Z' })).toMatch(/^expires_at: must be between/);
  });
});
