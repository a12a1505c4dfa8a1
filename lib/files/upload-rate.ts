// Upload rates per plan (docs/UPLOADS.md "Upload rates"): the files and bytes an account may upload a
// minute and a UTC day. Each window is one item per account (`uploadrate#<account>` / `minute#<n>`,
// `day#<date>`) whose counters are ADDed, on the condition that they stay within the rate, in the same
// transaction that writes the upload (the record of a direct upload, the hold of a presign): no read
// first, no wait of its own, and only an upload that is written counts. The items expire with their window.
import { errors } from '#lib/core/errors.ts';
import { epochSeconds, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import { UploadError } from './errors.ts';
import { DAY_MS } from './quota-model.ts';

/** `upload.rate` (and a plan's, `upload.rate_by_plan.<id>`): 0 is no limit. */
export interface UploadRate {
  files_per_minute: number;
  files_per_day: number;
  bytes_per_minute: number;
  bytes_per_day: number;
}

export interface UploadRateDeps {
  table: Table;
  /** `upload.rate`: accounts without an active plan, and a plan's fields left out. */
  rate: UploadRate;
  /** `upload.rate_by_plan`, by plan id. */
  byPlan: Readonly<Record<string, Partial<UploadRate>>>;
}

const WINDOWS = [
  { name: 'minute', ms: 60_000, files: 'files_per_minute', bytes: 'bytes_per_minute' },
  { name: 'day', ms: DAY_MS, files: 'files_per_day', bytes: 'bytes_per_day' },
] as const;
type Window = (typeof WINDOWS)[number];

interface Counted {
  window: Window;
  key: { pk: string; sk: string };
  /** epoch milliseconds: when the window ends (and its counts with it) */
  endsMs: number;
}

/** One upload's count in its account's windows: the conditional writes, and what a refusal of them says. */
export interface RateCharge {
  items: TransactItem[];
  /** 413: the bytes are more than a window ever lets through. */
  check(): void;
  /** Throws the 429 naming the rate when one of `failed` (indexes into `items`) is one of its writes. */
  refuse(failed: readonly number[]): Promise<void>;
}

const windowKey = (accountId: string, window: Window, startMs: number) => ({
  pk: `uploadrate#${accountId}`,
  sk:
    window.name === 'day'
      ? `day#${new Date(startMs).toISOString().slice(0, 10)}`
      : `minute#${startMs / window.ms}`,
});

export class UploadRates {
  constructor(private readonly deps: UploadRateDeps) {}

  /** The rate of an account holding plan `planId` (undefined: none). */
  rateOf(planId: string | undefined): UploadRate {
    return { ...this.deps.rate, ...(planId === undefined ? {} : this.deps.byPlan[planId]) };
  }

  /** Counts one upload of `bytes` by `accountId` under `rate` (the windows with a limit only). */
  charge(accountId: string, rate: UploadRate, bytes: number): RateCharge {
    const now = this.deps.table.clock().getTime();
    const counted: Counted[] = [];
    const items: TransactItem[] = [];
    for (const window of WINDOWS) {
      const [maxFiles, maxBytes] = [rate[window.files], rate[window.bytes]];
      if (maxFiles === 0 && maxBytes === 0) continue;
      const startMs = Math.floor(now / window.ms) * window.ms;
      const key = windowKey(accountId, window, startMs);
      counted.push({ window, key, endsMs: startMs + window.ms });
      items.push({
        Update: {
          Key: key,
          UpdateExpression: 'ADD files :one, #bytes :bytes SET expires_at = :expires',
          ConditionExpression: [
            ...(maxFiles > 0 ? ['(attribute_not_exists(files) OR files < :maxFiles)'] : []),
            ...(maxBytes > 0 ? ['(attribute_not_exists(#bytes) OR #bytes <= :room)'] : []),
          ].join(' AND '),
          ExpressionAttributeNames: { '#bytes': 'bytes' },
          ExpressionAttributeValues: {
            ':one': 1,
            ':bytes': bytes,
            ':expires': epochSeconds(new Date(startMs + window.ms)) + 60,
            ...(maxFiles > 0 ? { ':maxFiles': maxFiles } : {}),
            ...(maxBytes > 0 ? { ':room': maxBytes - bytes } : {}),
          },
        },
      });
    }
    return {
      items,
      check: () => {
        for (const { window } of counted) {
          const maxBytes = rate[window.bytes];
          if (maxBytes > 0 && bytes > maxBytes) {
            throw new UploadError(
              'payload_too_large',
              `file: larger than the upload rate of ${maxBytes} bytes per ${window.name}`,
              { limitBytes: maxBytes },
            );
          }
        }
      },
      refuse: async (failed) => {
        const hit = counted.find((_, index) => failed.includes(index));
        if (!hit) return;
        // Counts only grow within a window: the one at its limit now was at it when the write was refused.
        const current = await this.deps.table.get<{ files?: number }>(hit.key);
        const maxFiles = rate[hit.window.files];
        const what =
          maxFiles > 0 && (current?.files ?? 0) >= maxFiles
            ? `${maxFiles} files`
            : `${rate[hit.window.bytes]} bytes`;
        throw errors.tooManyRequests(
          (hit.endsMs - this.deps.table.clock().getTime()) / 1000,
          `Upload rate exceeded: at most ${what} per ${hit.window.name}`,
        );
      },
    };
  }
}
