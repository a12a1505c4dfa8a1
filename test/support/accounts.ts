// Creates accounts and sessions straight through the repositories, for tests of other capabilities.
import { randomBytes } from 'node:crypto';
import type { Account } from '../../lib/accounts/repository.ts';
import { sessionService } from '../../lib/auth/index.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import type { Role } from '../../lib/http/types.ts';

export interface TestAccount {
  account: Account;
  token: string;
  password: string;
  headers: { authorization: string };
}

let passwordHash: Promise<string> | undefined;
export const TEST_PASSWORD = 'correct horse battery';

export async function createTestAccount(options: { role?: Role; username?: string; email?: string } = {}) {
  passwordHash ??= hashPassword(TEST_PASSWORD);
  const suffix = randomBytes(4).toString('hex');
  const sessions = sessionService();
  const account = await sessions.accounts.create({
    username: options.username ?? `user_${suffix}`,
    email: options.email ?? `user_${suffix}@example.test`,
    emailVerified: true,
    role: options.role ?? 'user',
    passwordHash: await passwordHash,
  });
  const { token } = await sessions.issue(account);
  return {
    account,
    token,
    password: TEST_PASSWORD,
    headers: { authorization: `Bearer ${token}` },
  } as TestAccount;
}
