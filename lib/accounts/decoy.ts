// The account nobody has: an item shaped and sized like an account (in DECOY_COPIES copies), with the
// argon2id hash of a random password, read and verified against when a login names nobody. So an unknown identifier costs what a
// known one costs: one account-sized read and one full verification of a stored hash (docs/ACCOUNTS.md
// "Timing"). No identifier claim points at it, so nobody can log in to it.
import { randomBytes, randomInt } from 'node:crypto';
import { conditionFailedReturns, type Table } from '#lib/platform/db/table.ts';
import type { Account } from './model.ts';
import { hashPassword } from './passwords.ts';
import { newAccount } from './repository.ts';

/**
 * Copies of the decoy, one read per unknown name: the read is what makes an unknown name cost what a known
 * one costs, so it is not cached; the copies spread it, so no item takes a read for every unknown-name
 * login (docs/CAPACITY.md). Each is the same account-sized item.
 */
export const DECOY_COPIES = 16;
export const decoyKey = (copy: number) => ({ pk: `decoy#account#${copy}`, sk: 'account' });

export interface DecoyAccountDeps {
  table: Table;
}

export class DecoyAccount {
  private ensured: Promise<void> | undefined;

  constructor(private readonly deps: DecoyAccountDeps) {}

  /** Creates the copies once (the first writer of each wins); run before requests are served (auth warm-up). */
  ensure(): Promise<void> {
    this.ensured ??= this.create().catch((error: unknown) => {
      this.ensured = undefined;
      throw error;
    });
    return this.ensured;
  }

  private known: string | undefined;

  /** One copy, read as an account would be; undefined if it was never created (then a dummy is verified). */
  async read(): Promise<Pick<Account, 'password_hash'> | undefined> {
    const copy = randomInt(DECOY_COPIES);
    const item = await this.deps.table.get<{ pk: string; sk: string; password_hash?: string }>(
      decoyKey(copy),
    );
    if (item?.password_hash) this.known = item.password_hash;
    return item?.password_hash ? { password_hash: item.password_hash } : undefined;
  }

  /**
   * Its hash as last read (it never changes once created), read now only the first time: login needs it
   * before the hash runs, where a known account's comes with its claim. Login still reads a copy beside
   * the hash, as it reads a known account's item there.
   */
  async hash(): Promise<string | undefined> {
    if (this.known) return this.known;
    return (await this.read())?.password_hash;
  }

  private async create(): Promise<void> {
    const keys = Array.from({ length: DECOY_COPIES }, (_, copy) => decoyKey(copy));
    const found = await this.deps.table.getMany<{ password_hash?: string }>(keys);
    if (found.every((item) => item !== undefined)) return;
    const now = this.deps.table.clock().toISOString();
    const filler = (length: number) => randomBytes(length).toString('base64url').slice(0, length);
    // The attributes of an ordinary account, of ordinary lengths: the read costs what an account's does.
    // Every copy has the same hash (one of a random password nobody knows): whichever a login reads, the
    // verification costs the same.
    const passwordHash =
      found.find((item) => item?.password_hash)?.password_hash ??
      (await hashPassword(randomBytes(24).toString('base64url')));
    const account = newAccount(
      filler(36),
      {
        username: filler(12),
        email: `${filler(12)}@example.invalid`,
        emailVerified: true,
        role: 'user',
        passwordHash,
      },
      now,
    );
    await Promise.all(
      keys.map((key, copy) =>
        found[copy]
          ? undefined
          : this.deps.table.putNew({ ...key, ...account }).catch(conditionFailedReturns(undefined)),
      ),
    );
  }
}
