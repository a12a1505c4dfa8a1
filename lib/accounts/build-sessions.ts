// Builds what every authenticating group shares of accounts (token signer, sessions, API tokens) and what
// other domains read of them (the account records, security events); production and tests call the same.
// buildAccounts takes these and hands them on, so files and billing name them as `Pick<Accounts, ...>`.
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { ApiTokenService } from './api-tokens.ts';
import { DEFAULT_PASSWORD_GUESS_LIMIT, LoginGuard, type PasswordGuessLimit } from './login-guard.ts';
import { AccountRepository } from './repository.ts';
import { SecurityEvents } from './security-events.ts';
import { SessionService } from './sessions.ts';
import { TokenSigner } from './tokens.ts';

export interface AccountRecordsInput {
  table: Table;
  /** `listing_shards`: identifier claims are listed over this many shards (lib/platform/db/shards.ts). */
  listingShards: number;
}

/** The account records and security events over the table alone (the reminders worker has no master key). */
export function buildAccountRecords({ table, listingShards }: AccountRecordsInput) {
  return {
    repository: new AccountRepository({ table, listingShards }),
    securityEvents: new SecurityEvents({ table }),
  };
}

export interface SessionsInput extends AccountRecordsInput {
  masterKey: () => Promise<MasterKey>;
  /** `auth.session_ttl_hours`. */
  ttlHours: number;
}

export function buildSessions(input: SessionsInput) {
  const { table, masterKey, ttlHours } = input;
  const records = buildAccountRecords(input);
  const signer = new TokenSigner({ table, masterKey });
  return {
    ...records,
    signer,
    sessions: new SessionService({ table, signer, ttlHours }),
    apiTokens: new ApiTokenService({ table, accounts: records.repository, events: records.securityEvents }),
  };
}

export type Sessions = ReturnType<typeof buildSessions>;

/** The password-guessing guard over the table: accounts' logins, and share links' passwords alike. */
export function buildPasswordGuard({ table, limit }: { table: Table; limit?: PasswordGuessLimit }) {
  return { guard: new LoginGuard({ table, limit: limit ?? DEFAULT_PASSWORD_GUESS_LIMIT }) };
}
