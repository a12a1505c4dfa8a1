// E-mail verification codes (docs/SPEC.md 4.1 rule 8, docs/DESIGN.md 5): six digits from a CSPRNG, stored only as a
// peppered HMAC, 10 minutes, at most 5 attempts, single use, one live code per (purpose, subject): a new
// send replaces the old. Attempts are counted by a conditional update before the comparison, so
// concurrent guesses cannot exceed the cap; consuming is a conditional delete that can join a transaction.
import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { AppError } from '#lib/core/errors.ts';
import {
  conditionFailedAs,
  epochSeconds,
  type Item,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';

export type CodePurpose = 'register' | 'email_bind' | 'reset';

export const CODE_TTL_SECONDS = 600;

export const codeKey = (purpose: CodePurpose, subject: string) => ({
  pk: `code#${purpose}#${subject.trim().toLowerCase()}`,
  sk: 'code',
});

/** One answer for every unusable code: wrong, expired, used, or past its attempts. */
export function invalidCode(message = 'code: is invalid or expired'): AppError {
  return new AppError('bad_request', message);
}

export interface CodeItem extends Item {
  pk: string;
  sk: string;
  code_id: string;
  digest: string;
  attempts: number;
  /** The address the code was sent to (lower-case). */
  target: string;
  account_id?: string;
  expires_at: number;
}

export interface CheckedCode {
  item: CodeItem;
  /** Deletes the code if it is still this one: put it in the transaction that uses the code. */
  consume: TransactItem;
}

export interface CodeStoreDeps {
  table: Table;
  pepper: () => Promise<Buffer>;
}

export class CodeStore {
  constructor(private readonly deps: CodeStoreDeps) {}

  private async digest(purpose: CodePurpose, subject: string, codeId: string, code: string) {
    return createHmac('sha256', await this.deps.pepper())
      .update(`${purpose}|${subject.trim().toLowerCase()}|${codeId}|${code}`)
      .digest('base64url');
  }

  /** Creates the live code of (purpose, subject), replacing any earlier one. Returns the plain code. */
  async issue(
    purpose: CodePurpose,
    subject: string,
    fields: { target: string; accountId?: string },
  ): Promise<{ code: string; expiresAt: Date }> {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const codeId = randomBytes(12).toString('base64url');
    const now = this.deps.table.clock();
    const expiresAt = new Date(now.getTime() + CODE_TTL_SECONDS * 1000);
    await this.deps.table.put({
      ...codeKey(purpose, subject),
      code_id: codeId,
      digest: await this.digest(purpose, subject, codeId, code),
      attempts: 0,
      target: fields.target.trim().toLowerCase(),
      ...(fields.accountId ? { account_id: fields.accountId } : {}),
      created_at: now.toISOString(),
      expires_at: epochSeconds(expiresAt),
    });
    return { code, expiresAt };
  }

  /**
   * Spends one attempt on the live code and compares. Throws the invalid-code error when there is no live
   * code, its attempts are used up (the sixth try fails even with the right code), the code differs, or
   * `target` is given and is not the address the code went to.
   */
  async check(
    purpose: CodePurpose,
    subject: string,
    code: string,
    options: { target?: string; error?: () => AppError } = {},
  ): Promise<CheckedCode> {
    const fail = options.error ?? (() => invalidCode());
    const key = codeKey(purpose, subject);
    const item = await this.deps.table
      .update<CodeItem>(key, {
        UpdateExpression: 'ADD #attempts :one',
        ConditionExpression: 'attribute_exists(pk) AND #attempts < :max AND #expires > :now',
        ExpressionAttributeNames: { '#attempts': 'attempts', '#expires': 'expires_at' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':max': 5,
          ':now': epochSeconds(this.deps.table.clock()),
        },
      })
      .catch(conditionFailedAs(fail));
    const expected = Buffer.from(item.digest, 'utf8');
    const actual = Buffer.from(await this.digest(purpose, subject, item.code_id, code), 'utf8');
    const matches = expected.length === actual.length && timingSafeEqual(expected, actual);
    const targetMatches = options.target === undefined || item.target === options.target.trim().toLowerCase();
    if (!matches || !targetMatches) throw fail();
    return {
      item,
      consume: {
        Delete: {
          Key: key,
          ConditionExpression: 'code_id = :id',
          ExpressionAttributeValues: { ':id': item.code_id },
        },
      },
    };
  }
}
