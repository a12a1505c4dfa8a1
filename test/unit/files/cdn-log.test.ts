// The CDN's standard log as the bandwidth worker reads it (lib/files/cdn-log.ts): bytes served under /i/ per
// month and owner tag, whatever the order of the `#Fields` header, refusals and keys without a tag left out.
import { describe, expect, it } from 'vitest';
import { bytesPerOwnerMonth, formatCdnLog } from '#lib/files/cdn-log.ts';

const TAG = '0123456789abcdef';
const OTHER = 'fedcba9876543210';
const key = (tag: string) => `/i/2026/11/28/0b9c2d1e-1111-4222-8333-944455556666-4f2a9c01d3b7${tag}.png`;

describe('the CDN log', () => {
  it('sums bytes per month and owner tag, originals and renditions alike', () => {
    const text = formatCdnLog([
      { date: '2026-11-28', 'sc-bytes': '1000', 'cs-uri-stem': key(TAG), 'sc-status': '200' },
      {
        date: '2026-11-28',
        'sc-bytes': '300',
        'cs-uri-stem': key(TAG),
        'sc-status': '200',
        'cs-uri-query': 'w=480&f=webp',
      },
      { date: '2026-12-01', 'sc-bytes': '50', 'cs-uri-stem': key(TAG), 'sc-status': '304' },
      { date: '2026-11-28', 'sc-bytes': '7', 'cs-uri-stem': key(OTHER), 'sc-status': '206' },
    ]);

    const sums = bytesPerOwnerMonth(text);

    expect(Object.fromEntries([...sums].map(([entry, sum]) => [entry, sum.bytes]))).toEqual({
      [`2026-11|${TAG}`]: 1300,
      [`2026-12|${TAG}`]: 50,
      [`2026-11|${OTHER}`]: 7,
    });
    expect(sums.get(`2026-11|${TAG}`)?.path).toBe(key(TAG));
  });

  it('reads the fields where the header puts them, and leaves out refusals, other paths and untagged keys', () => {
    const text = [
      '#Version: 1.0',
      '#Fields: sc-status cs-uri-stem date time sc-bytes',
      ['200', key(TAG), '2026-11-28', '10:00:00', '500'].join('\t'),
      ['403', key(TAG), '2026-11-28', '10:00:01', '900'].join('\t'),
      ['404', key(TAG), '2026-11-28', '10:00:02', '900'].join('\t'),
      ['200', '/api/v1/files', '2026-11-28', '10:00:03', '900'].join('\t'),
      [
        '200',
        '/i/2026/11/28/0b9c2d1e-1111-4222-8333-944455556666-4f2a9c01d3b7.png',
        '2026-11-28',
        'x',
        '900',
      ].join('\t'),
      ['200', key(TAG), '2026-11-28', '10:00:04', '-'].join('\t'),
      '',
    ].join('\n');

    expect([...bytesPerOwnerMonth(text)].map(([entry, sum]) => [entry, sum.bytes])).toEqual([
      [`2026-11|${TAG}`, 500],
    ]);
  });

  it('escapes what would break a record, so a Referer with a tab cannot shift the fields', () => {
    const text = formatCdnLog([
      {
        date: '2026-11-28',
        'sc-bytes': '42',
        'cs-uri-stem': key(TAG),
        'sc-status': '200',
        'cs(Referer)': 'https://a.example/\tx 1',
      },
    ]);

    expect(text.split('\n')[2]?.split('\t')).toHaveLength(12);
    expect(bytesPerOwnerMonth(text).get(`2026-11|${TAG}`)?.bytes).toBe(42);
  });
});
