// The account nobody has: one item shaped and sized like an account, with the argon2id hash of a random
// password, read and verified against when a login names nobody. So an unknown identifier costs what a
// known one costs: one account-sized read and one full verification of a stored hash (docs/ACCOUNTS.md
// "Timing"). No identifier claim points at it, so nobody can log in to it.
import { randomBytes } from 'node:crypto';
import { conditionFailedReturns, type Table } from '#lib/platform/db/table.ts';
import type { Account } from './model.ts';
import { hashPassword } from './passwords.ts';
import { newAccount } from './repository.ts';

export const DECOY_ACCOUNT_KEY = { pk: 'decoy#account', sk: 'account' };

export class DecoyAccount {
  private ensured: Promise<void> | undefined;

  constructor(private readonly table: Table) {}

  /** Creates the item once (the first writer wins); run before requests are served (auth warm-up). */
  ensure(): Promise<void> {
    this.ensured ??= this.create().catch((error: unknown) => {
      this.ensured = undefined;
      throw error;
    });
    return this.ensured;
  }

  private known: string | undefined;

  /** Its hash, read as an account would be; undefined if it was never created (then a dummy is verified). */
  async read(): Promise<Pick<Account, 'password_hash'> | undefined> {
    const item = await this.table.get<{ pk: string; sk: string; password_hash?: string }>(DECOY_ACCOUNT_KEY);
    if (item?.password_hash) this.known = item.password_hash;
    return item?.password_hash ? { password_hash: item.password_hash } : undefined;
  }

  /**
   * Its hash as last read (it never changes once created), read now only the first time: login needs it
   * before the hash runs, where a known account's comes with its claim. Login still reads the item beside
   * the hash, as it reads a known account's item there.
   */
  async hash(): Promise<string | undefined> {
    if (this.known) return this.known;
    return (await this.read())?.password_hash;
  }

  private async create(): Promise<void> {
    if (await this.table.get(DECOY_ACCOUNT_KEY)) return;
    const now = this.table.clock().toISOString();
    const filler = (length: number) => randomBytes(length).toString('base64url').slice(0, length);
    // The attributes of an ordinary account, of ordinary lengths: the read costs what an account's does.
    await this.table
      .putNew({
        ...DECOY_ACCOUNT_KEY,
        ...newAccount(
          filler(36),
          {
            username: filler(12),
            email: `${filler(12)}@example.invalid`,
            emailVerified: true,
            role: 'user',
            passwordHash: await hashPassword(randomBytes(24).toString('base64url')),
          },
          now,
        ),
      })
      .catch(conditionFailedReturns(undefined));
  }
}
