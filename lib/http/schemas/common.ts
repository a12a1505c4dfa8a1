// Pieces every group's schemas share: a stored time, a page of items, a deletion's answer, a user-given name.
import { hasUnwantedCharacter } from '#lib/files/names.ts';
import * as z from '#lib/platform/zod.ts';

/** A time as the service writes it: ISO 8601 with its offset (lib/platform/time.ts). */
export const timestamp = z
  .string()
  .check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/));

export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.nullable(z.string()) });

export const deletedView = z.object({ id: z.string(), deleted: z.literal(true) });

/**
 * `altcha`: a solved proof-of-work challenge (the base64 payload ALTCHA's widget submits) or a Turnstile
 * token; checked where `auth.challenge.required` (lib/accounts/proof-of-work.ts), accepted and ignored elsewhere.
 */
export const altchaField = z.optional(z.string().check(z.maxLength(4096, 'must be at most 4096 characters')));

/** GET /api/v1/challenge: ALTCHA's classic challenge, and which widget the deployment uses. */
export const challengeView = z.object({
  algorithm: z.string(),
  challenge: z.string(),
  salt: z.string(),
  signature: z.string(),
  maxnumber: z.number(),
  /** Whether the protected requests need a solution (`auth.challenge.required`). */
  required: z.boolean(),
  provider: z.enum(['altcha', 'turnstile']),
  site_key: z.nullable(z.string()),
});

export const healthView = z.object({ status: z.literal('ok') });

/**
 * The check every name a user gives takes (albums, API tokens, plans, passkeys, coupon codes): no control
 * characters (C0, DEL, C1), bidirectional marks, embeddings, overrides or isolates, nor lone surrogates; a
 * 400 naming the field. A file's own name is cleaned of them instead (lib/files/names.ts).
 */
export const nameCharacters = () =>
  z.refine<string>((value) => !hasUnwantedCharacter(value), {
    message: 'must not contain control characters, bidirectional controls or lone surrogates',
  });
