// The account export's routes (docs/ACCOUNTS.md "Export"): its state and the mailed link's query.
import * as z from '#lib/platform/zod.ts';
import { timestamp } from './common.ts';

export const exportView = z.object({
  id: z.string(),
  state: z.enum(['pending', 'running', 'ready', 'failed']),
  requested_at: timestamp,
  finished_at: z.nullable(timestamp),
  /** The ZIP's bytes and how many originals it holds, once ready. */
  size: z.nullable(z.number().check(z.int())),
  files: z.nullable(z.number().check(z.int())),
  /** Until when the mailed link works. */
  link_expires_at: z.nullable(timestamp),
  /** GET only, once ready: a link as the mailed one (24 hours from the request). */
  download_url: z.nullable(z.string()),
});

export const latestExport = z.nullable(exportView);

export const downloadQuery = z.object({
  expires: z.string().check(z.regex(/^\d{1,12}$/, 'must be a time in epoch seconds')),
  sig: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/, 'must be the link signature')),
});

export const noBody = z.object({});
