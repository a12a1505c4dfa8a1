import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sesClient } from '#lib/platform/aws/ses.ts';
import { logMailer } from '#lib/platform/mail/mailer.ts';
import { sesMailer } from '#lib/platform/mail/ses.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import { authHarness } from '#test/support/accounts.ts';
import { captureLog, startSesStandIn } from '#test/support/mail.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let ses: Awaited<ReturnType<typeof startSesStandIn>>;
beforeAll(async () => {
  await provisionTestStack();
  ses = await startSesStandIn();
});
afterAll(async () => {
  await ses.close();
});

describe('mail', () => {
  it('sends through SES with a text and an HTML body', async () => {
    const mailer = sesMailer(
      sesClient({ region: 'us-east-1', endpoint: ses.endpoint }),
      'noreply@example.test',
    );
    await mailer.send(codeMail('reset', 'ses-one@example.test', '424242', 10));
    const [mail] = (await ses.mails()).filter((item) => item.to === 'ses-one@example.test');
    expect(mail?.subject).toMatch(/reset/);
    expect(mail?.text).toContain('424242');
    expect(mail?.html).toContain('<strong>424242</strong>');
  });

  it('carries the registration flow end to end through the SES stand-in', async () => {
    const mailer = sesMailer(
      sesClient({ region: 'us-east-1', endpoint: ses.endpoint }),
      'noreply@example.test',
    );
    const h = authHarness({ mailer });
    const email = `ses-flow-${Date.now()}@example.test`;
    expect((await h.call('POST', '/auth/register/code', { email })).status).toBe(200);
    const code = await ses.codeFor(email);
    const created = await h.call('POST', '/auth/register', {
      username: `ses_${Date.now()}`,
      email,
      code,
      password: 'ses-password-1',
    });
    expect(created.status).toBe(201);
  });

  it('answers 503 without leaking anything when SES refuses', async () => {
    const mailer = sesMailer(
      sesClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }),
      'noreply@example.test',
    );
    const log = captureLog();
    await expect(mailer.send(codeMail('register', 'x@example.test', '777777', 10))).rejects.toMatchObject({
      errorName: 'service_unavailable',
    });
    expect(log.lines.join('\n')).not.toContain('777777');
    log.stop();
  });

  it('writes one log line with to, subject and code when no mail channel is set', async () => {
    const log = captureLog();
    await logMailer.send(codeMail('email_bind', 'log@example.test', '135790', 10));
    const [line] = log.mails();
    expect(line).toMatchObject({ to: 'log@example.test', subject: expect.any(String), code: '135790' });
    expect(log.codeFor('log@example.test')).toBe('135790');
    log.stop();
  });
});
