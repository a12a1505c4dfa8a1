// Mail through the SES stand-in when mail.from is set, and the per-IP limit, over the local HTTP server.
import { afterAll, describe, expect, it, vi } from 'vitest';

const ses = await vi.hoisted(async () => {
  const { startSesStandIn: start } = await import('#test/support/mail.ts');
  const standIn = await start();
  process.env.MAIL__FROM = 'noreply@example.test';
  process.env.AWS__SES_ENDPOINT = standIn.endpoint;
  process.env.AUTH__IP_LIMIT_PER_MINUTE = '4';
  return standIn;
});

import { useLocalApp } from '#test/support/local-app.ts';
import { captureLog } from '#test/support/mail.ts';

afterAll(() => ses.close());
const log = captureLog();
afterAll(() => log.stop());
const app = useLocalApp();

const post = (path: string, body: object) => app.request('POST', path, { body });

describe('SES mail and the per-IP limit over HTTP', () => {
  it('mails the code through SES (text and HTML) and keeps it out of the log', async () => {
    const email = `ses-e2e-${Date.now()}@example.test`;
    expect((await post('/auth/register/code', { email })).status).toBe(200);
    const code = await ses.codeFor(email);
    const mail = (await ses.mails()).find((item) => item.to === email)!;
    expect(mail.html).toContain(code);
    expect(log.lines.join('\n')).not.toContain(code);
    expect(
      (
        await post('/auth/register', {
          username: `ses_e2e_${Date.now() % 1e6}`,
          email,
          code,
          password: 'ses-e2e-password',
        })
      ).status,
    ).toBe(201);
  });

  it('answers 429 with Retry-After once one address exceeds auth.ip_limit_per_minute', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => post('/auth/login', { username: 'nobody_here', password: 'whatever' })),
    );
    const limited = results.filter((res) => res.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(2);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
