// A share link as a visitor's browser and a blog's <img> see it, through the local HTTP server
// (docs/DESIGN.md 16): the page without script, its password form posting to itself, and the random
// image's redirect, followed to the bytes.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let user: TestAccount;
let albumId: string;
const images = [makePng(12, 8, [200, 10, 10]), makePng(8, 12, [10, 10, 200])];
const urls: string[] = [];

beforeAll(async () => {
  user = await createTestAccount();
  const album = await app.api('POST', '/api/v1/albums', { token: user.token, body: { name: 'Banners' } });
  albumId = album.data.id;
  for (const [index, bytes] of images.entries()) {
    const form = new FormData();
    form.append('album_id', albumId);
    form.append('file', new Blob([bytes], { type: 'image/png' }), `banner-${index}.png`);
    const uploaded = await app.api('POST', '/api/v1/upload', { token: user.token, body: form });
    expect(uploaded.status).toBe(200);
    urls.push(uploaded.data.url);
  }
});

describe('GET /s/{id}', () => {
  it('shows the album with no script, its own style sheet and images of this service only', async () => {
    const share = await app.api('POST', '/api/v1/shares', { token: user.token, body: { album_id: albumId } });

    const response = await fetch(app.at(share.data.url));
    const page = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '';
    const policy = (response.headers.get('content-security-policy') ?? '').split('; ');
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(policy).toContain("form-action 'self'");
    expect(policy.some((directive) => directive.startsWith('script-src'))).toBe(false);
    expect(page).not.toMatch(/<script|\son\w+=/i);
    expect(page).toContain('<h1>Banners</h1>');
    for (const url of urls) expect(page).toContain(`href="${url}"`);
  });

  it('asks for the password with a form that posts to the page, then shows the album', async () => {
    const share = await app.api('POST', '/api/v1/shares', {
      token: user.token,
      body: { album_id: albumId, password: 'share-e2e-pass' },
    });
    const path = new URL(share.data.url).pathname;

    const form = await fetch(app.at(path));
    const formPage = await form.text();
    const posted = await fetch(app.at(path), {
      method: 'POST',
      body: new URLSearchParams({ password: 'share-e2e-pass' }),
    });

    expect(form.status).toBe(401);
    expect(formPage).toContain(`<form method="post" action="${path}">`);
    expect(formPage).toContain('type="password"');
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain(`href="${urls[0]}"`);
  });
});

describe('GET /s/{id}/random', () => {
  it('redirects, uncached, to one of the album images, which the redirect leads to', async () => {
    const share = await app.api('POST', '/api/v1/shares', { token: user.token, body: { album_id: albumId } });
    const path = `${new URL(share.data.url).pathname}/random`;

    const response = await fetch(app.at(path), { redirect: 'manual' });

    expect(response.status).toBe(302);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const location = response.headers.get('location') ?? '';
    expect(urls).toContain(location);
    const image = Buffer.from(await (await fetch(app.at(location))).arrayBuffer());
    expect(images.some((bytes) => bytes.equals(image))).toBe(true);
  });
});
