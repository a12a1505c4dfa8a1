// Recovery codes (docs/ACCOUNTS.md "Recovery codes"): ten codes of 10 lower-case base32 characters
// (50 bits each), written `xxxxx-xxxxx`, shown once. The account keeps only a peppered HMAC of each,
// per account, in a string set; using one deletes it from the set in the same transaction that ends
// the login challenge, so each works once however many requests race with it.
import { createHmac, randomInt } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const GROUP = 5;

/** What a client may send: hyphen optional, any case. */
export const RECOVERY_CODE_INPUT = /^[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}$/;

export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    let plain = '';
    for (let index = 0; index < 2 * GROUP; index++) plain += ALPHABET[randomInt(ALPHABET.length)];
    codes.add(`${plain.slice(0, GROUP)}-${plain.slice(GROUP)}`);
  }
  return [...codes];
}

/** The canonical form a code is hashed in (lower case, no hyphen), or undefined if it is not a code. */
export function normalizeRecoveryCode(input: string): string | undefined {
  if (!RECOVERY_CODE_INPUT.test(input)) return undefined;
  return input.replace('-', '').toLowerCase();
}

export interface RecoveryCodeHasherDeps {
  pepper: () => Promise<Buffer>;
}

/** Digests of recovery codes: HMAC-SHA256 with a pepper kept sealed by the master key, bound to the account. */
export class RecoveryCodeHasher {
  constructor(private readonly deps: RecoveryCodeHasherDeps) {}

  async digest(accountId: string, code: string): Promise<string> {
    const normalized = normalizeRecoveryCode(code);
    if (!normalized) throw new Error('not a recovery code');
    return createHmac('sha256', await this.deps.pepper())
      .update(`recovery|${accountId}|${normalized}`)
      .digest('base64url');
  }

  async digests(accountId: string, codes: readonly string[]): Promise<Set<string>> {
    return new Set(await Promise.all(codes.map((code) => this.digest(accountId, code))));
  }
}
