// The pure rules of the second wave of account security (docs/DESIGN.md 10): address buckets, recovery-code
// format, the password back-off, notice mails, the QR code and the body schemas of the new endpoints.
import { encode } from 'uqr';
import { describe, expect, it } from 'vitest';
import { addressBucket, clientOf, MAX_USER_AGENT_CHARS } from '#lib/accounts/client.ts';
import { DEFAULT_PASSWORD_GUESS_LIMIT, LoginGuard } from '#lib/accounts/login-guard.ts';
import { qrDataUrl } from '#lib/accounts/qr.ts';
import {
  generateRecoveryCodes,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
} from '#lib/accounts/recovery-codes.ts';
import { queries, schemas } from '#lib/http/schemas/accounts.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { type SecurityNoticeKind, securityNoticeMail } from '#lib/platform/mail/templates.ts';

describe('per-address buckets', () => {
  it('keeps IPv4 addresses whole and keys IPv6 clients by their /64, however they are written', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    const forms = [
      '2001:db8:1:2:aaaa:bbbb:cccc:dddd',
      '2001:0db8:0001:0002:0000:0000:0000:0001',
      '2001:db8:1:2::1',
      '2001:DB8:1:2::ffff',
      'fe80::1%eth0'.replace('fe80', '2001:db8:1:2'),
    ];
    for (const form of forms) expect(addressBucket(form), form).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
  });

  it('counts IPv4-mapped IPv6 as the IPv4 address it carries, and tolerates junk', () => {
    expect(addressBucket('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(addressBucket('')).toBe('unknown');
    expect(addressBucket('not-an-address')).toBe('not-an-address');
  });

  it('cuts a hostile user agent rather than storing it whole', () => {
    const client = clientOf({ sourceIp: '203.0.113.7', userAgent: 'x'.repeat(5000) });
    expect(client.userAgent).toHaveLength(MAX_USER_AGENT_CHARS);
  });
});

describe('recovery codes', () => {
  it('are ten distinct codes of 10 lower-case base32 characters written xxxxx-xxxxx', () => {
    const codes = generateRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
  });

  it('are accepted with or without the hyphen and in any case, and nothing else is', () => {
    expect(normalizeRecoveryCode('abcde-fgh23')).toBe('abcdefgh23');
    expect(normalizeRecoveryCode('ABCDEFGH23')).toBe('abcdefgh23');
    expect(normalizeRecoveryCode('AbCdE-fGh23')).toBe('abcdefgh23');
    for (const bad of [
      'abcde--fgh23',
      'abcde-fgh2',
      'abcde-fgh231',
      'abcde-fgh18',
      '123456',
      ' abcde-fgh23',
    ]) {
      expect(normalizeRecoveryCode(bad), bad).toBeUndefined();
    }
    const verify = schemas.totpVerify;
    expect(verify.safeParse({ challenge_token: 't', code: 'ABCDEFGH23' }).success).toBe(true);
    expect(verify.safeParse({ challenge_token: 't', code: '123456' }).success).toBe(true);
    expect(verify.safeParse({ challenge_token: 't', code: 'abcde_fgh23' }).success).toBe(false);
  });
});

describe('password back-off', () => {
  it('locks 1 minute after the 10th failure, doubling with each further one, at most 15 minutes', () => {
    const guard = new LoginGuard({ table: {} as Table, limit: DEFAULT_PASSWORD_GUESS_LIMIT });
    const minutes = [10, 11, 12, 13, 14, 15, 40].map((failures) => guard.lockMsAfter(failures) / 60_000);
    expect(minutes).toEqual([1, 2, 4, 8, 15, 15, 15]);
  });
});

describe('notice mails', () => {
  const kinds: SecurityNoticeKind[] = [
    'password_changed',
    'password_reset',
    'totp_enabled',
    'totp_disabled',
    'totp_reset',
    'recovery_code_used',
    'recovery_codes_regenerated',
    'email_changed',
  ];

  it('name the time and the source address, in text and escaped HTML, and carry no code', () => {
    const at = new Date('2026-11-21T08:09:10.500Z');
    const subjects = new Set<string>();
    for (const kind of kinds) {
      const mail = securityNoticeMail(kind, 'ann@example.test', {
        username: '<ann>',
        at,
        ip: '2001:db8::7',
        newEmail: 'bob@example.test',
        remaining: 7,
      });
      subjects.add(mail.subject);
      expect(mail.to).toBe('ann@example.test');
      expect(mail.text, kind).toContain('2026-11-21 08:09:10 UTC');
      expect(mail.text, kind).toContain('2001:db8::7');
      expect(mail.html, kind).toContain('2001:db8::7');
      expect(mail.html, kind).not.toContain('<ann>');
      expect(mail.code, kind).toBeUndefined();
      expect(mail.text, kind).not.toContain('bob@example.test');
    }
    expect(subjects.size).toBe(kinds.length);
    const reset = securityNoticeMail('password_reset', 'a@b.test', { username: 'a', at, ip: '' });
    expect(reset.text).toMatch(/API token/);
    expect(reset.text).toContain('unknown');
  });
});

describe('TOTP setup QR code', () => {
  it('is an SVG data URL of the otpauth link', async () => {
    const uri = 'otpauth://totp/Account%20Service:ann?secret=JBSWY3DPEHPK3PXP&issuer=Account%20Service';
    const url = await qrDataUrl(uri);
    expect(url.startsWith('data:image/svg+xml;base64,')).toBe(true);
    const svg = Buffer.from(url.slice('data:image/svg+xml;base64,'.length), 'base64').toString('utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // The drawn modules are exactly the QR matrix of the link (with the 4-module quiet zone).
    const { size, data } = encode(uri, { ecc: 'M', border: 4 });
    const dark = data.flat().filter(Boolean).length;
    expect(svg.match(/h4v4h-4z/g)).toHaveLength(dark);
    expect(svg).toContain(`viewBox="0 0 ${size * 4} ${size * 4}"`);
  });
});

describe('bodies and queries of the new endpoints', () => {
  it('name the field of every bad value', () => {
    const field = (result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }) =>
      result.error?.issues.map((issue) => issue.path.join('.'));
    expect(field(schemas.passwordOnly.safeParse({}))).toEqual(['password']);
    expect(field(schemas.passwordOnly.safeParse({ password: 5 }))).toEqual(['password']);
    expect(field(schemas.passwordOnly.safeParse({ password: 'x'.repeat(129) }))).toEqual(['password']);
    expect(field(schemas.adminStatus.safeParse({ status: 'gone' }))).toEqual(['status']);
    expect(field(schemas.emailVerify.safeParse({ email: 'a@b.test', code: '123456' }))).toEqual(['password']);
    expect(
      field(schemas.adminCreate.safeParse({ username: 'abc', email: 'a@b.test', password: 'long-enough' })),
    ).toEqual(['current_password']);
    expect(field(queries.accountSearch.safeParse({ q: 'x'.repeat(255) }))).toEqual(['q']);
    expect(field(queries.accountSearch.safeParse({ limit: '0' }))).toEqual(['limit']);
    expect(queries.accountSearch.parse({ q: '  Ann ' })).toEqual({ q: 'Ann', limit: 20 });
  });
});
