// A share link as a visitor's browser and a blog's <img> see it, through the local HTTP server
// (docs/DESIGN.md 16): the page without script, its password form posting to itself, the random image's
// redirect followed to the bytes, and the page's images through the share's own door, which close with it.
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

/** The page's image links (href: the original; img src: its thumbnail), entities decoded. */
function linksOf(page: string): { originals: string[]; thumbnails: string[] } {
  const decode = (value: string) => value.replaceAll('&amp;', '&');
  return {
    originals: [...page.matchAll(/<a href="([^"]+)">/g)].map((match) => decode(match[1]!)),
    thumbnails: [...page.matchAll(/<img src="([^"]+)"/g)].map((match) => decode(match[1]!)),
  };
}

const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

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
    // No password, no view limit: the same page for anyone, kept a minute at the edge as by this server.
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '';
    const policy = (response.headers.get('content-security-policy') ?? '').split('; ');
    expect(policy).toContain("default-src 'none'");
    expect(policy.find((directive) => directive.startsWith('style-src '))).toContain(
      `'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    );
    expect(policy).toContain("form-action 'self'");
    expect(policy.some((directive) => directive.startsWith('script-src'))).toBe(false);
    expect(page).not.toMatch(/<script|\son\w+=/i);
    expect(page).toContain('<h1>Banners</h1>');
    // The share's own links, never the files' /i/<key>.
    for (const url of urls) expect(page).not.toContain(new URL(url).pathname);
    const { originals, thumbnails } = linksOf(page);
    expect(originals).toHaveLength(2);
    for (const link of [...originals, ...thumbnails])
      expect(link.startsWith(`${share.data.url}/i/`)).toBe(true);
  });

  it('serves its images through the share, and stops once the share is revoked', async () => {
    const share = await app.api('POST', '/api/v1/shares', { token: user.token, body: { album_id: albumId } });
    const { originals, thumbnails } = linksOf(await (await fetch(app.at(share.data.url))).text());

    const served = await Promise.all(originals.map(async (link) => bytesOf(await fetch(app.at(link)))));
    const thumbnail = await fetch(app.at(thumbnails[0]!));

    expect(served.map((bytes) => images.findIndex((image) => image.equals(bytes))).sort()).toEqual([0, 1]);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    expect(thumbnail.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);

    const revoked = await app.api('DELETE', `/api/v1/shares/${share.data.id}`, { token: user.token });
    expect(revoked.status).toBe(200);
    for (const link of [originals[0]!, thumbnails[0]!]) expect((await fetch(app.at(link))).status).toBe(410);
    // The files' own links are unlisted links, untouched by the share.
    expect((await fetch(app.at(urls[0]!))).status).toBe(200);
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
    const { originals } = linksOf(await posted.text());
    expect(originals).toHaveLength(2);
    expect((await fetch(app.at(originals[0]!))).status).toBe(200);
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
    expect(location.startsWith(`${share.data.url}/i/`)).toBe(true);
    const image = await bytesOf(await fetch(app.at(location)));
    expect(images.some((bytes) => bytes.equals(image))).toBe(true);
  });
});
