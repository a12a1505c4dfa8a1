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

  // Kept for the container's life once read: the item never changes once written (the first writer wins
  // and nothing updates it), so the copy cannot be stale. Should it be deleted or replaced anyway (a table
  // restored from a backup), a warm container keeps verifying against the old hash until it is recycled:
  // harmless, as nobody knows the password of either. Without it every unknown-name login would read this
  // one item, a hot key (DynamoDB serves 3,000 strongly consistent reads a second per partition).
  private known: Pick<Account, 'password_hash'> | undefined;

  /**
   * Its hash, read as an account would be on the container's first use (then remembered, above);
   * undefined if it was never created (then a dummy is verified, and the next call reads again). A login
   * reads the known account beside the hash, where its wait is hidden behind the verification: the
   * decoy's cached answer does not show in the login's time.
   */
  async read(): Promise<Pick<Account, 'password_hash'> | undefined> {
    if (this.known) return this.known;
    const item = await this.table.get<{ pk: string; sk: string; password_hash?: string }>(DECOY_ACCOUNT_KEY);
    if (item?.password_hash) this.known = { password_hash: item.password_hash };
    return this.known;
  }

  /** Its hash (read once per container, above): login needs it before the hash runs. */
  async hash(): Promise<string | undefined> {
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
