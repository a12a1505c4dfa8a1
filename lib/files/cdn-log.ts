// The CDN's standard access logs (CloudFront's format: tab-separated, `#Version` and `#Fields` headers, `-`
// for nothing) as the bandwidth worker reads them and the local server writes them (docs/UPLOADS.md
// "Bandwidth"): bytes served under /i/ summed per month and owner tag (lib/files/names.ts ownerTagOfKey).
import { ownerTagOfKey } from './names.ts';

/** The fields CloudFront's standard log carries, in its order. */
export const CDN_LOG_FIELDS = [
  'date',
  'time',
  'x-edge-location',
  'sc-bytes',
  'c-ip',
  'cs-method',
  'cs(Host)',
  'cs-uri-stem',
  'sc-status',
  'cs(Referer)',
  'cs(User-Agent)',
  'cs-uri-query',
] as const;

export type CdnLogRecord = Partial<Record<(typeof CDN_LOG_FIELDS)[number], string>>;

/** A log object's text: the headers, then one line per record (absent fields `-`, tabs and spaces escaped). */
export function formatCdnLog(records: readonly CdnLogRecord[]): string {
  const lines = records.map((record) =>
    CDN_LOG_FIELDS.map(
      (field) => (record[field] ?? '-').replace(/[\t\n ]/g, (c) => encodeURI(c)) || '-',
    ).join('\t'),
  );
  return `#Version: 1.0\n#Fields: ${CDN_LOG_FIELDS.join(' ')}\n${lines.join('\n')}\n`;
}

/** What one owner tag was served in one month: bytes, and one path served (which names the owner's file). */
export interface ServedSum {
  bytes: number;
  path: string;
}

/** `<month>|<tag>` → bytes served: the answers under /i/ below 400 whose key carries an owner tag. */
export function bytesPerOwnerMonth(text: string): Map<string, ServedSum> {
  const sums = new Map<string, ServedSum>();
  let at: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#Fields:')) {
      at = Object.fromEntries(
        line
          .slice(8)
          .trim()
          .split(/\s+/)
          .map((name, index) => [name, index]),
      );
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const values = line.split('\t');
    const value = (field: string) => (at[field] === undefined ? undefined : values[at[field]]);
    const [date, stem, status, bytes] = ['date', 'cs-uri-stem', 'sc-status', 'sc-bytes'].map(value);
    if (!date || !stem?.startsWith('/i/') || !(Number(status) < 400)) continue;
    const tag = ownerTagOfKey(stem);
    const served = Number(bytes);
    if (tag === undefined || !Number.isSafeInteger(served) || served <= 0) continue;
    const entry = `${date.slice(0, 7)}|${tag}`;
    sums.set(entry, { bytes: (sums.get(entry)?.bytes ?? 0) + served, path: stem });
  }
  return sums;
}
