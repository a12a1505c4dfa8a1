// The operator's site (docs/DEPLOYMENT.md "Branding") on DynamoDB Local: everyone reads it, an administrator
// saves it whole (the footer stored sanitized, bad fields a 400 naming them, a stale version 409), an
// ordinary user is refused, and the group's mails are signed off with the saved name.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { signedMailer } from '#lib/platform/mail/mailer.ts';
import { sanitizeFooter } from '#lib/platform/site/footer.ts';
import { authHarness } from '#test/support/accounts.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const PASSWORD = 'admin-password-1';

async function adminToken(h: ReturnType<typeof authHarness>) {
  const account = await h.accounts.repository.create({
    username: `brand_${randomBytes(4).toString('hex')}`,
    email: `brand_${randomBytes(4).toString('hex')}@example.test`,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(PASSWORD),
  });
  const login = await h.call('POST', '/admin/auth/login', { username: account.username, password: PASSWORD });
  return login.body.data.token as string;
}

describe('the site settings', () => {
  it("answers everyone the config's name and defaults, cacheable for a minute", async () => {
    const h = authHarness();
    const site = await h.call('GET', '/api/v1/site');
    expect(site.status).toBe(200);
    expect(site.headers['cache-control']).toBe('public, max-age=60');
    expect(site.body.data).toMatchObject({
      name: 'Image host',
      accent_color: '#0b57d0',
      channel_labels: { channel_a: 'Alipay', channel_b: 'WeChat Pay', channel_c: 'EPay' },
    });
  });

  it("saves an administrator's site with the footer stripped of scripts, handlers and javascript: links", async () => {
    const h = authHarness();
    const token = await adminToken(h);
    const { data } = (await h.call('GET', '/api/v1/site')).body;
    const saved = await h.call(
      'PUT',
      '/api/v1/admin/site',
      {
        ...data,
        name: 'Pixel Harbour',
        logo_url: 'https://cdn.example.com/logo.png',
        accent_color: '#aa3300',
        footer_html:
          '<p>© Harbour <a href="javascript:alert(1)">x</a><a href="https://example.com/about" onclick="x()">About</a><img src=x onerror="alert(2)"><script>alert(3)</script><style>body{}</style></p>',
      },
      { token },
    );
    expect(saved.status, saved.raw).toBe(200);
    const footer = saved.body.data.footer_html as string;
    expect(footer).not.toMatch(/script|onerror|onclick|javascript:|<img|<style|alert/);
    expect(footer).toContain('<a href="https://example.com/about" rel="noopener noreferrer">About</a>');
    const read = await h.call('GET', '/api/v1/site');
    expect(read.body.data).toMatchObject({
      name: 'Pixel Harbour',
      accent_color: '#aa3300',
      footer_html: footer,
    });
    expect(read.body.data.version).toBe(data.version + 1);
    // A save over a version another request replaced is refused.
    const stale = await h.call('PUT', '/api/v1/admin/site', { ...data, name: 'Late' }, { token });
    expect(stale.status).toBe(409);
  });

  it('refuses a bad colour, a javascript: logo and a protocol-relative favicon with a 400 naming the field', async () => {
    const h = authHarness();
    const token = await adminToken(h);
    const { data } = (await h.call('GET', '/api/v1/site')).body;
    const cases: Array<[object, RegExp]> = [
      [{ accent_color: 'red' }, /^accent_color: must be a colour as #rrggbb/],
      [{ accent_color: '#12345' }, /^accent_color:/],
      [{ logo_url: 'javascript:alert(1)' }, /^logo_url: must be an https URL or a path/],
      [{ favicon: '//evil.example/x.ico' }, /^favicon:/],
      [{ name: '' }, /^name:/],
      [{ footer_html: 'x'.repeat(4001) }, /^footer_html: must be at most 4000/],
    ];
    for (const [change, message] of cases) {
      const answer = await h.call('PUT', '/api/v1/admin/site', { ...data, ...change }, { token });
      expect(answer.status, JSON.stringify(change)).toBe(400);
      expect(answer.body.message).toMatch(message);
    }
  });

  it('refuses an ordinary user (403) and an anonymous caller (401)', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const { data } = (await h.call('GET', '/api/v1/site')).body;
    const body = { ...data, name: 'Mine now' };
    expect((await h.call('PUT', '/api/v1/admin/site', body, { token: user.token })).status).toBe(403);
    expect((await h.call('PUT', '/api/v1/admin/site', body)).status).toBe(401);
    expect((await h.call('GET', '/api/v1/site')).body.data.name).not.toBe('Mine now');
  });
});

describe('the footer and the mails', () => {
  it('keeps plain links and text, drops everything executable', () => {
    expect(sanitizeFooter('<b onmouseover="x()">Hi</b> <iframe src="https://x"></iframe>')).toBe('<b>Hi</b>');
  });

  it("signs every mail off with the site's name, in its text and its HTML", async () => {
    const inner = memoryMailer();
    const mailer = signedMailer(inner, async () => 'Pixel <Harbour>');
    await mailer.send({
      to: 'a@example.test',
      subject: 'S',
      text: 'Body\n',
      html: '<html><body><p>Body</p></body></html>',
    });
    expect(inner.sent[0]).toMatchObject({ subject: 'S', text: 'Body\n\n— Pixel <Harbour>\n' });
    expect(inner.sent[0]!.html).toContain('<p>— Pixel &lt;Harbour&gt;</p>\n</body>');
  });
});
