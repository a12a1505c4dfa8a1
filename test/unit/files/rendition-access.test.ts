import { describe, expect, it } from 'vitest';
import { AppError } from '#lib/core/errors.ts';
import {
  anonymousRenditionsPerOriginal,
  askedRendition,
  presetsOf,
  renditionSignature,
  renditionUrlSigner,
  verifyRendition,
} from '#lib/files/rendition-access.ts';
import {
  canonicalQuery,
  outputFormatsOf,
  renditionQueryOf,
  THUMBNAIL_QUERY,
} from '#lib/files/rendition-query.ts';
import {
  DEFAULT_IMAGE_PRESETS,
  DEFAULT_IMAGE_QUALITIES,
  DEFAULT_IMAGE_WIDTHS,
} from '#lib/platform/config/schema.ts';

const LIMITS = { widths: [...DEFAULT_IMAGE_WIDTHS], qualities: [...DEFAULT_IMAGE_QUALITIES] };
const PRESETS = presetsOf(DEFAULT_IMAGE_PRESETS, LIMITS);
const KEY = '2024/05/06/a.jpg';
const SECRET = 'a'.repeat(48);

const ask = (raw: string) => askedRendition(renditionQueryOf(raw), PRESETS, LIMITS);
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { status: error.errorName, message: error.message };
    throw error;
  }
  throw new Error('not refused');
};

describe('presets', () => {
  it('serves a preset, with f auto, webp or avif, to anyone', () => {
    expect(ask('p=thumb')).toEqual({
      params: { width: 480, fit: 'inside', quality: 75, format: 'webp' },
      fallback: 'webp',
    });
    const auto = ask('p=thumb&f=auto');
    expect(auto.params.format).toBe('auto');
    // f=auto: the formats the Accept header names beside the preset's own (never the source's).
    expect(outputFormatsOf(auto.params, 'jpeg', 'other', auto.fallback)).toEqual(['webp']);
    expect(outputFormatsOf(auto.params, 'jpeg', 'avif,webp', auto.fallback)).toEqual(['avif', 'webp']);
    expect(ask('p=avatar&f=avif').params).toMatchObject({
      width: 128,
      height: 128,
      fit: 'cover',
      format: 'avif',
    });
  });

  it("serves a preset's own query unsigned: the thumbnails of older records", () => {
    expect(ask(THUMBNAIL_QUERY).signature).toBeUndefined();
    expect(canonicalQuery(ask(THUMBNAIL_QUERY).params, 'webp')).toBe(
      canonicalQuery(ask('p=thumb').params, 'webp'),
    );
  });

  it('refuses an unknown preset (400 naming it), and other parameters beside one', () => {
    expect(refusal(() => ask('p=huge'))).toEqual({
      status: 'bad_request',
      message: 'p: there is no preset named huge; use one of thumb, small, medium, large, avatar',
    });
    expect(refusal(() => ask('p=thumb&w=960')).status).toBe('bad_request');
    expect(refusal(() => ask('p=thumb&f=jpeg')).status).toBe('bad_request');
    expect(refusal(() => ask('p=thumb&p=small')).status).toBe('bad_request');
  });

  it('bounds what an anonymous client can force: presets x formats, at most 12 by default', () => {
    expect(anonymousRenditionsPerOriginal(PRESETS)).toBe(10);
  });

  it('refuses a preset without a fixed format at startup', () => {
    expect(() => presetsOf({ odd: 'w=480&f=auto' }, LIMITS)).toThrow(/images.presets.odd/);
  });
});

describe('signatures', () => {
  it('refuses any other combination without a signature (403 naming s)', () => {
    const { status, message } = refusal(() => ask('w=960&q=90'));
    expect(status).toBe('forbidden');
    expect(message).toMatch(/^s: only presets/);
  });

  it('verifies a signed query: the same rendition however written, nothing else', async () => {
    const sign = renditionUrlSigner(
      { base_url: 'https://cdn.example.com/', images: { ...LIMITS } as never },
      async () => [SECRET],
    );
    const url = new URL(await sign(KEY, new URLSearchParams('w=960&q=90')));
    expect(url.pathname).toBe(`/i/${KEY}`);
    const asked = ask(url.search.slice(1));
    expect(asked.signature).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(() => verifyRendition([SECRET], KEY, asked.params, asked.signature!)).not.toThrow();
    // The previous secret of a rotation still verifies; another key or query does not.
    expect(() =>
      verifyRendition(['b'.repeat(48), SECRET], KEY, asked.params, asked.signature!),
    ).not.toThrow();
    expect(
      refusal(() => verifyRendition([SECRET], '2024/05/06/b.jpg', asked.params, asked.signature!)),
    ).toEqual({
      status: 'forbidden',
      message: 's: the signature does not match this file and query',
    });
    const other = ask(`w=1920&q=90&s=${asked.signature}`);
    expect(refusal(() => verifyRendition([SECRET], KEY, other.params, other.signature!)).status).toBe(
      'forbidden',
    );
    expect(refusal(() => verifyRendition([], KEY, asked.params, asked.signature!)).message).toMatch(
      /not enabled/,
    );
  });

  it('is HMAC-SHA256 of the key and canonical query, 16 bytes in base64url', () => {
    const params = ask('w=960&q=90&s=x').params;
    expect(renditionSignature(SECRET, KEY, params)).toBe(
      renditionSignature(SECRET, KEY, ask('q=90&fit=inside&w=960&s=y').params),
    );
    expect(Buffer.from(renditionSignature(SECRET, KEY, params), 'base64url')).toHaveLength(16);
  });

  it('checks the parameters it signs (400 naming one)', async () => {
    const sign = renditionUrlSigner(
      { base_url: 'https://x.example', images: { ...LIMITS } as never },
      async () => [SECRET],
    );
    await expect(sign(KEY, new URLSearchParams('w=481'))).rejects.toMatchObject({ errorName: 'bad_request' });
    await expect(sign('2024/05/06/a.bmp', new URLSearchParams('w=480'))).rejects.toMatchObject({
      errorName: 'unsupported_media_type',
    });
  });
});
