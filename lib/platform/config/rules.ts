// The settings' rules that are code rather than data: used by the zod schema (schema.ts) and, by identity,
// recorded in its shape (shape.ts), so the fast path (fast-path.ts) applies the very same functions.
// No zod here: the fast path imports this at every cold start.

/** docs/SPEC.md 8: the channel_b v3 key is exactly 32 bytes. */
export function isThirtyTwoBytes(key: string): boolean {
  return Buffer.byteLength(key, 'utf8') === 32;
}

/** The front door reads its secret from Secrets Manager only when it is told which one. */
export function namesItsSecret(door: { provider: string; secret_id?: string | undefined }): boolean {
  return door.provider !== 'secrets-manager' || door.secret_id !== undefined;
}

/** `base_url` is joined with paths: no trailing slash. */
export function withoutTrailingSlashes(value: string): string {
  return value.replace(/\/+$/, '');
}

/** By name, for the shape (shape.ts records which rule a refinement or transform is). */
export const RULES = { isThirtyTwoBytes, namesItsSecret, withoutTrailingSlashes } as const;
export type RuleName = keyof typeof RULES;
