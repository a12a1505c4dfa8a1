// Pieces every group's schemas share: a stored time, a page of items, a deletion's answer.
import * as z from '#lib/platform/zod.ts';

/** A time as the service writes it: ISO 8601 with its offset (lib/platform/time.ts). */
export const timestamp = z
  .string()
  .check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/));

export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.nullable(z.string()) });

export const deletedView = z.object({ id: z.string(), deleted: z.literal(true) });

export const healthView = z.object({ status: z.literal('ok') });
