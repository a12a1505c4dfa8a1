// The webhook routes' bodies and answers (docs/WEBHOOKS.md), as schemas: the API document is generated from
// them and the contract tests hold every answer to them.

import * as z from '#lib/platform/zod.ts';
import { WEBHOOK_EVENTS } from '#lib/webhooks/endpoints.ts';
import { timestamp } from './common.ts';

export const webhookCreateBody = z.strictObject({
  url: z.string().check(z.maxLength(2048)),
  events: z.array(z.enum(WEBHOOK_EVENTS)).check(z.minLength(1), z.maxLength(WEBHOOK_EVENTS.length)),
  enabled: z.optional(z.boolean()),
});

export const webhookPatchBody = z.strictObject({ enabled: z.boolean() });

export const webhookView = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  enabled: z.boolean(),
  created_at: timestamp,
});
/** A new endpoint: its signing secret, shown this once. */
export const webhookCreated = z.extend(webhookView, { secret: z.string() });
export const webhookList = z.array(webhookView);

export const deliveryList = z.array(
  z.object({
    id: z.string(),
    type: z.enum(WEBHOOK_EVENTS),
    created_at: timestamp,
    state: z.enum(['pending', 'delivered', 'failed', 'cancelled']),
    next_attempt_at: z.nullable(timestamp),
    attempts: z.array(
      z.object({
        at: timestamp,
        status: z.nullable(z.number()),
        error: z.nullable(z.string()),
        duration_ms: z.number(),
        response: z.string(),
      }),
    ),
  }),
);
