// The address bans' routes (docs/ABUSE.md "Bans"): the new ban's body and a ban as answered.
import * as z from '#lib/platform/zod.ts';
import { instant } from './billing.ts';
import { nameCharacters, timestamp } from './common.ts';

export const banBody = z.object({
  cidr: z.string().check(z.maxLength(64, 'must be an IPv4 or IPv6 address or prefix')),
  reason: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), nameCharacters()),
  expires_at: z.optional(instant),
});

export const banView = z.object({
  id: z.string(),
  cidr: z.string(),
  reason: z.string(),
  created_at: timestamp,
  created_by: z.string(),
  expires_at: z.nullable(timestamp),
});

export const banList = z.object({ items: z.array(banView) });
