// Renditions as a stranger and as an owner see them through the local server playing the CDN
// (docs/IMAGES.md "Presets and signatures", "A clean cache key"): presets for anyone, any other query
// only signed, parameters that are no rendition's dropped, and a bounded number of stored renditions.
import { beforeAll, describe, expect, it } from 'vitest';
import { measureImage } from '#lib/files/measure.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { listBucket } from '#test/support/faults.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let owner: TestAccount;
let stranger: TestAccount;
let file: { id: string; key: string; thumbnail: string };
const bytes = makePng(1200, 800, [30, 120, 200]);

async function upload(png = bytes): Promise<typeof file> {
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'photo.png');
  const { body } = await app.request('POST', '/api/v1/upload', { token: owner.token, body: form });
  return (body as { data: typeof file }).data;
}

beforeAll(async () => {
  [owner, stranger] = await Promise.all([createTestAccount(), createTestAccount()]);
  file = await upload();
});

async function get(path: string, accept = 'image/avif,image/webp,*/*') {
  const response = await fetch(`${app.url}${path}`, { headers: { accept }, redirect: 'manual' });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get('content-type'), body };
}

const message = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { message: string }).message;

async function signedUrl(token: string, query: Record<string, unknown>) {
  return app.request('POST', `/api/v1/files/${file.id}/rendition-url`, { token, body: query });
}

describe('renditions no stranger can multiply', () => {
  it('records carry the thumb preset, served to anyone', async () => {
    expect(file.thumbnail).toMatch(/\/i\/.+\?p=thumb$/);
    const thumb = await get(`/i/${file.key}?p=thumb`);
    expect([thumb.status, thumb.type]).toEqual([200, 'image/webp']);
    // Older records' thumbnails: the preset's own query, still unsigned.
    expect((await get(`/i/${file.key}?w=480&q=75&f=webp`)).status).toBe(200);
    const auto = await get(`/i/${file.key}?p=thumb&f=auto`);
    expect([auto.status, auto.type]).toEqual([200, 'image/avif']);
    expect((await get(`/i/${file.key}?p=thumb&f=auto`, 'image/png')).type).toBe('image/webp');
  });

  it('refuses an unsigned non-preset rendition (403) and an unknown preset (400)', async () => {
    const unsigned = await get(`/i/${file.key}?w=960&q=90`);
    expect(unsigned.status).toBe(403);
    expect(message(unsigned.body)).toMatch(/^s: only presets/);
    const forged = await get(`/i/${file.key}?w=960&q=90&s=AAAAAAAAAAAAAAAAAAAAAA`);
    expect([forged.status, message(forged.body)]).toEqual([
      403,
      's: the signature does not match this file and query',
    ]);
    const unknown = await get(`/i/${file.key}?p=huge`);
    expect([unknown.status, message(unknown.body)]).toEqual([
      400,
      'p: there is no preset named huge; use one of thumb, small, medium, large, avatar',
    ]);
  });

  it("renders a signed one, the URL from the owner's endpoint; others get 404", async () => {
    const { status, body } = await signedUrl(owner.token, { w: 256, h: 256, fit: 'cover', f: 'jpeg' });
    expect(status).toBe(200);
    const url = new URL((body as { data: { url: string } }).data.url);
    const signed = await get(`${url.pathname}${url.search}`);
    expect([signed.status, signed.type]).toEqual([200, 'image/jpeg']);
    expect((await signedUrl(stranger.token, { w: 256 })).status).toBe(404);
    expect((await signedUrl(owner.token, { w: 257 })).status).toBe(400);
  });

  it("answers the original's bytes when only other parameters are given; drops them beside a preset", async () => {
    const original = await get(`/i/${file.key}?fbclid=x`);
    expect(original.status).toBe(200);
    expect(original.body.equals(bytes)).toBe(true);
    const thumb = await get(`/i/${file.key}?v=2&p=thumb`);
    expect([thumb.status, thumb.type]).toEqual([200, 'image/webp']);
    expect(thumb.body.equals((await get(`/i/${file.key}?p=thumb`)).body)).toBe(true);
  });

  it('lets an anonymous client force at most presets x formats stored renditions', async () => {
    const { key } = await upload(makePng(600, 400, [200, 40, 40]));
    const presets = ['thumb', 'small', 'medium', 'large', 'avatar'];
    const tries = presets.flatMap((p) =>
      ['', '&f=auto', '&f=webp', '&f=avif', '&f=jpeg', '&f=png', '&q=90', '&w=16', '&utm_source=x'].map(
        (extra) => `/i/${key}?p=${p}${extra}`,
      ),
    );
    tries.push(`/i/${key}?w=480&q=90`, `/i/${key}?f=png`, `/i/${key}?w=16&q=50&f=jpeg`);
    for (const path of tries) {
      await get(path);
      await get(path, 'image/png');
    }
    const derived = (await listBucket()).filter((stored) => stored.startsWith(`derived/${key}/`));
    expect(derived.length).toBeGreaterThan(0);
    expect(derived.length).toBeLessThanOrEqual(presets.length * 2);
    // small, medium and large are over the 600 px original: the original's size, one copy per format,
    // beside thumb's and avatar's (docs/IMAGES.md "What a rendition is").
    expect(derived).toHaveLength(3 * 2);
    const large = await get(`/i/${key}?p=large&f=webp`);
    expect(measureImage(large.body)).toEqual({ width: 600, height: 400 });
  }, 120_000);
});
