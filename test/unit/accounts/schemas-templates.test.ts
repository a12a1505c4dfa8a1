import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { matchTotp } from '#lib/accounts/totp.ts';
import { schemas } from '#lib/http/schemas/accounts.ts';
import { escapeHtml } from '#lib/platform/html.ts';
import { codeMail, maskEmail, securityNoticeMail } from '#lib/platform/mail/templates.ts';

describe('account body schemas', () => {
  it('accept the docs/DESIGN.md usernames and refuse the rest', () => {
    const base = { email: 'a@b.test', code: '123456', password: 'long-enough' };
    for (const username of ['abc', 'A.b-c_9', 'x'.repeat(32)]) {
      expect(schemas.register.safeParse({ ...base, username }).success).toBe(true);
    }
    for (const username of ['ab', 'x'.repeat(33), 'a b', 'a@b.test', 'ünï', '']) {
      expect(schemas.register.safeParse({ ...base, username }).success).toBe(false);
    }
  });

  it('bound passwords to 8..128 when set and 1..128 when checked', () => {
    expect(
      schemas.passwordChange.safeParse({ current_password: 'x', new_password: '12345678' }).success,
    ).toBe(true);
    expect(schemas.passwordChange.safeParse({ current_password: '', new_password: '12345678' }).success).toBe(
      false,
    );
    expect(schemas.passwordChange.safeParse({ current_password: 'x', new_password: '1234567' }).success).toBe(
      false,
    );
    expect(
      schemas.passwordChange.safeParse({ current_password: 'x', new_password: 'x'.repeat(129) }).success,
    ).toBe(false);
  });

  it('need a code or a password to disable TOTP, and drop unknown fields', () => {
    expect(schemas.totpDisable.safeParse({}).success).toBe(false);
    expect(schemas.totpDisable.safeParse({ code: '123456' }).success).toBe(true);
    expect(schemas.totpDisable.safeParse({ password: 'pw' }).success).toBe(true);
    expect(schemas.emailOnly.parse({ email: 'a@b.test', extra: 1 })).toEqual({ email: 'a@b.test' });
  });
});

describe('mail templates', () => {
  it('send the code in a text and an HTML version', () => {
    const mail = codeMail('register', 'a@b.test', '012345', 10);
    expect(mail).toMatchObject({ to: 'a@b.test', code: '012345' });
    expect(mail.text).toContain('012345');
    expect(mail.html).toContain('<strong>012345</strong>');
    expect(mail.text).toContain('10 minutes');
  });

  it('carry a reset link beside the code in text and HTML, never in the field the no-mail log writes', () => {
    const link = 'https://pics.example.test/#/reset?token=Rq8v-Tn2bXc5mLk9pZs1dFg4hJw7yAe0uIo3tGr6eNb';
    const mail = codeMail('reset', 'a@b.test', '012345', 10, link);
    expect(mail.text).toContain(link);
    expect(mail.html).toContain(`<a href="${link}">`);
    expect(JSON.stringify({ to: mail.to, subject: mail.subject, code: mail.code })).not.toContain('token=');
  });

  it('take a device token at login and a reset by code or by link, naming what is missing', () => {
    const login = { username: 'ann', password: 'pw' };
    expect(schemas.login.parse({ ...login, device_token: 'x'.repeat(43) }).device_token).toHaveLength(43);
    expect(schemas.login.safeParse({ ...login, device_token: 'x'.repeat(257) }).success).toBe(false);
    const token = 'A'.repeat(43);
    expect(schemas.passwordReset.safeParse({ token, new_password: 'long enough' }).success).toBe(true);
    expect(schemas.passwordReset.safeParse({ token: 'short', new_password: 'long enough' }).success).toBe(
      false,
    );
    const neither = schemas.passwordReset.safeParse({ new_password: 'long enough' });
    expect(neither.success).toBe(false);
    expect(neither.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['email', 'code']);
    expect(
      schemas.passwordReset.safeParse({ email: 'a@b.test', code: '123456', new_password: 'long enough' })
        .success,
    ).toBe(true);
  });

  it('escape HTML and mask the new address in a change notice', () => {
    expect(escapeHtml(`<a href="x">'&`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    expect(maskEmail('alice@example.test')).toBe('a***@example.test');
    const notice = securityNoticeMail('email_changed', 'old@example.test', {
      username: '<script>',
      at: new Date('2026-11-21T08:00:00Z'),
      ip: '203.0.113.9',
      newEmail: 'newer@example.test',
    });
    expect(notice.to).toBe('old@example.test');
    expect(notice.text).not.toContain('newer@');
    expect(notice.html).not.toContain('<script>');
    expect(notice.code).toBeUndefined();
  });
});

describe('TOTP matching', () => {
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const at = (seconds: number) => generate({ secret, epoch: seconds });
  const now = new Date(1_900_000_020_000);
  const t = 1_900_000_020;

  it('accepts the current step and one either side, not two', async () => {
    expect(await matchTotp(secret, await at(t), now, undefined)).toBe(Math.floor(t / 30));
    expect(await matchTotp(secret, await at(t - 30), now, undefined)).toBe(Math.floor(t / 30) - 1);
    expect(await matchTotp(secret, await at(t + 30), now, undefined)).toBe(Math.floor(t / 30) + 1);
    const far = await at(t - 90);
    if (far !== (await at(t)) && far !== (await at(t - 30)) && far !== (await at(t + 30))) {
      expect(await matchTotp(secret, far, now, undefined)).toBeUndefined();
    }
  });

  it('refuses a step at or before the last accepted one (replay guard) and malformed input', async () => {
    const step = Math.floor(t / 30);
    expect(await matchTotp(secret, await at(t), now, step)).toBeUndefined();
    expect(await matchTotp(secret, await at(t - 30), now, step - 1)).toBeUndefined();
    expect(await matchTotp(secret, 'abcdef', now, undefined)).toBeUndefined();
    expect(await matchTotp('short', '123456', now, undefined)).toBeUndefined();
  });
});
