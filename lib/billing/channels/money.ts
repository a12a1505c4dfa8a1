// Conversion between the channels' yuan strings and our integer cents (fen), without floating point.

/** Thrown when cents are not a non-negative safe integer. */
export class InvalidAmountError extends Error {
  override readonly name = 'InvalidAmountError';
}

// Whole yuan up to 13 digits keeps every result below Number.MAX_SAFE_INTEGER cents.
const YUAN_TEXT = /^(\d{1,13})(?:\.(\d{1,2}))?$/;

/**
 * Parses "12.30", "12.3" or "12" into 1230 cents; undefined (rejected) for signs, exponents, spaces, a third
 * decimal, or anything that is not a plain non-negative decimal with at most two places.
 */
export function yuanToCents(text: string): number | undefined {
  const match = typeof text === 'string' ? YUAN_TEXT.exec(text) : null;
  if (!match) return undefined;
  const wholeYuan = match[1]!;
  const fraction = (match[2] ?? '').padEnd(2, '0');
  return Number(wholeYuan) * 100 + Number(fraction);
}

/** Formats 1230 cents as "12.30", the two-decimal form every channel accepts. */
export function centsToYuan(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) {
    throw new InvalidAmountError('amount in cents must be a non-negative safe integer');
  }
  const wholeYuan = Math.trunc(cents / 100);
  const fraction = String(cents % 100).padStart(2, '0');
  return `${wholeYuan}.${fraction}`;
}
