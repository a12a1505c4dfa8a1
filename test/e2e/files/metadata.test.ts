// A phone photo through the local HTTP server: what anyone fetching its url gets carries no GPS and still
// displays upright (upload.strip_metadata, on by default).
import { createHash } from 'node:crypto';
import exifr from 'exifr';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { jpegWithMetadata, SECRET } from '#test/support/metadata-images.ts';

const app = useLocalApp();
let user: TestAccount;

beforeAll(async () => {
  user = await createTestAccount();
});

interface UploadAnswer {
  code: number;
  data: { url: string; hash: string; size: number; width: number; height: number };
}

describe('an uploaded photo with GPS', () => {
  it('is served without GPS or other metadata, with its orientation, as its record describes', async () => {
    // Prepare
    const photo = jpegWithMetadata({ width: 9 + Math.floor(Math.random() * 40), height: 5, orientation: 6 });
    expect(await exifr.gps(photo)).toMatchObject({ latitude: expect.any(Number) });
    const form = new FormData();
    form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'IMG_0001.jpg');

    // Act
    const uploaded = await app.request('POST', '/api/v1/upload', { token: user.token, body: form });
    const answer = uploaded.body as UploadAnswer;
    // The url is built from `base_url`; this server listens on a port of its own.
    const served = await fetch(app.at(answer.data.url));
    const bytes = Buffer.from(await served.arrayBuffer());

    // Assess
    expect(answer.code).toBe(0);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    expect(await exifr.gps(bytes)).toBeUndefined();
    expect(await exifr.orientation(bytes)).toBe(6);
    expect(bytes.includes(SECRET)).toBe(false);
    expect(answer.data.hash).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(answer.data.size).toBe(bytes.length);
    expect(answer.data.height).toBeGreaterThan(answer.data.width);
  });
});
