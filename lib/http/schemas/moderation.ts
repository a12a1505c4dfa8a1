// The moderation routes' bodies and answers (docs/MODERATION.md): reports from anyone, the back office's
// queue and reviews, the block list and the audit log.
import { REPORT_REASONS } from '#lib/moderation/queue.ts';
import { REVIEW_ACTIONS } from '#lib/moderation/review.ts';
import { DEFAULT_PAGE_SIZE, pageQueryFields } from '#lib/platform/db/paging.ts';
import * as z from '#lib/platform/zod.ts';
import { altchaField, pageOf, timestamp } from './common.ts';
import { moderationView, uploadRecordSchema } from './files.ts';

/** The longest note a report may carry. */
export const REPORT_NOTE_MAX = 1000;

export const reportBody = z.object({
  url: z.string().check(z.trim(), z.minLength(1), z.maxLength(2048)),
  reason: z.enum(REPORT_REASONS),
  note: z.optional(z.string().check(z.trim(), z.maxLength(REPORT_NOTE_MAX))),
  altcha: altchaField,
});

export const reportReceived = z.object({ received: z.literal(true) });

export const moderationQuery = z.pipe(
  pageQueryFields,
  z.transform(({ limit, cursor }) => ({ limit: limit ?? DEFAULT_PAGE_SIZE, ...(cursor ? { cursor } : {}) })),
);

export const queueEntry = z.object({
  file: z.extend(uploadRecordSchema, { owner_id: z.string() }),
  queued_at: timestamp,
  report_count: z.number().check(z.int(), z.minimum(0)),
  reports: z.array(
    z.object({ reason: z.enum(REPORT_REASONS), note: z.nullable(z.string()), created_at: timestamp }),
  ),
});
export const queuePage = pageOf(queueEntry);

export const reviewBody = z.object({ action: z.enum(REVIEW_ACTIONS) });

export const reviewResult = z.object({
  id: z.string(),
  action: z.enum(REVIEW_ACTIONS),
  moderation: z.nullable(moderationView),
  blocked: z.boolean(),
  owner_disabled: z.boolean(),
});

export const blockEntry = z.object({
  id: z.string(),
  hash: z.string().check(z.regex(/^[0-9a-f]{16}$/)),
  file_id: z.string(),
  owner_id: z.string(),
  created_at: timestamp,
  created_by: z.string(),
});
export const blockPage = pageOf(blockEntry);

export const auditEvent = z.object({
  id: z.string(),
  actor_id: z.string(),
  action: z.string(),
  target: z.string(),
  from: z.string(),
  details: z.record(z.string(), z.unknown()),
  /** The answer's status; absent while the action runs, or if it never finished. */
  status: z.optional(z.number().check(z.int())),
  at: timestamp,
});

const filterText = z.optional(z.string().check(z.trim(), z.maxLength(200)));

/** A page of the audit log, narrowed to an administrator, an action (`bans.` for a prefix) or a target. */
export const auditQuery = z.pipe(
  z.extend(pageQueryFields, { actor_id: filterText, action: filterText, target: filterText }),
  z.transform(({ limit, cursor, actor_id, action, target }) => ({
    page: { limit: limit ?? DEFAULT_PAGE_SIZE, ...(cursor ? { cursor } : {}) },
    filter: { actor_id: actor_id || undefined, action: action || undefined, target: target || undefined },
  })),
);
export const auditPage = pageOf(auditEvent);
