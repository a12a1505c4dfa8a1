// One wording for enum, type and size problems on every route (the message names the field and the rule).

import { describe, expect, it } from 'vitest';
import { plainMessage } from '#lib/http/handler.ts';
import * as z from '#lib/platform/zod.ts';

// Built as the service builds its schemas (lib/platform/zod.ts: zod/mini with the English messages).
const schema = z.object({
  permission: z.enum(['private', 'public']),
  size: z.number().check(z.int(), z.minimum(1)),
  name: z.string().check(z.maxLength(3)),
  tags: z.array(z.string()).check(z.maxLength(2)),
  flag: z.boolean(),
  custom: z.string().check(z.minLength(5, 'must be at least 5 characters long, said the schema')),
});

function messagesFor(input: unknown): Record<string, string> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return {};
  return Object.fromEntries(parsed.error.issues.map((issue) => [issue.path.join('.'), plainMessage(issue)]));
}

describe('validation messages', () => {
  it('words wrong values, types and sizes the same way on every route', () => {
    expect(
      messagesFor({
        permission: 'secret',
        size: 0,
        name: 'abcd',
        tags: ['a', 'b', 'c'],
        flag: 'yes',
        custom: 'x',
      }),
    ).toEqual({
      permission: 'must be one of private, public',
      size: 'must be at least 1',
      name: 'must be at most 3 characters',
      tags: 'must have at most 2 items',
      flag: 'must be a boolean',
      custom: 'must be at least 5 characters long, said the schema',
    });
  });

  it('says "must not be empty" for a minimum of one, and counts one character or item in the singular', () => {
    const bounded = z.object({
      title: z.string().check(z.minLength(1)),
      initial: z.string().check(z.maxLength(1)),
      ids: z.array(z.string()).check(z.minLength(1)),
      only: z.array(z.string()).check(z.maxLength(1)),
    });
    const parsed = bounded.safeParse({ title: '', initial: 'ab', ids: [], only: ['a', 'b'] });
    expect(parsed.success).toBe(false);
    expect(
      Object.fromEntries(
        (parsed.error?.issues ?? []).map((issue) => [issue.path.join('.'), plainMessage(issue)]),
      ),
    ).toEqual({
      title: 'must not be empty',
      initial: 'must be at most 1 character',
      ids: 'must not be empty',
      only: 'must have at most 1 item',
    });
  });

  it('says a missing field is required', () => {
    expect(messagesFor({})).toMatchObject({
      permission: 'must be one of private, public',
      size: 'is required',
    });
  });
});
