// Builds the account domain from what it uses, once per container (or per test with its own clock and
// mailer): the shared pieces once, then one service per flow area. Production and tests call the same;
// the sessions and the signer come from build-sessions.ts, which every authenticating group shares.
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { AccountSessions } from './account-sessions.ts';
import { ApiTokenService } from './api-tokens.ts';
import { BackOffice } from './back-office.ts';
import { Challenges } from './challenge.ts';
import { CodeMail } from './code-mail.ts';
import { CodeStore } from './codes.ts';
import { DecoyAccount } from './decoy.ts';
import { DeviceTokens } from './device-tokens.ts';
import { EmailBinding } from './email.ts';
import { type AccountLimits, DEFAULT_LIMITS } from './limits.ts';
import { Login } from './login.ts';
import { LoginGuard } from './login-guard.ts';
import { PasskeyLogin } from './passkey-login.ts';
import { PasskeyStore } from './passkey-store.ts';
import { Passkeys } from './passkeys.ts';
import { PasswordChanges } from './password-changes.ts';
import { RecoveryCodeHasher } from './recovery-codes.ts';
import { Registration } from './registration.ts';
import { AccountRepository } from './repository.ts';
import { RequestLimits } from './request-limits.ts';
import { sealedKey } from './sealed-key.ts';
import { SecondFactor } from './second-factor.ts';
import { SecondFactorWrites } from './second-factor-writes.ts';
import { SecurityChanges } from './security-changes.ts';
import { SecurityEvents } from './security-events.ts';
import type { SessionService } from './sessions.ts';
import { Throttle } from './throttle.ts';
import type { TokenSigner } from './tokens.ts';
import type { AccountUsageReader } from './usage.ts';
import type { RelyingParty } from './webauthn.ts';

export interface AccountsInput {
  table: Table;
  mailer: Mailer;
  masterKey: () => Promise<MasterKey>;
  sessions: SessionService;
  signer: TokenSigner;
  limits?: Partial<AccountLimits>;
  /** Shown by authenticator apps next to the account name. */
  totpIssuer?: string;
  /** Storage use for the back-office listing; without it listings answer `usage: null`. */
  usage?: AccountUsageReader;
  /** `base_url`: reset links open the console there. */
  baseUrl?: string;
  /** Passkeys' relying party (`auth.passkeys`, docs/DESIGN.md 18). */
  relyingParty?: RelyingParty;
  /** `listing_shards`: identifier claims are listed over this many shards (lib/platform/db/shards.ts). */
  listingShards: number;
}

export function buildAccounts(input: AccountsInput) {
  const { table, mailer, masterKey, sessions, signer } = input;
  const limits: AccountLimits = { ...DEFAULT_LIMITS, ...input.limits };
  const { listingShards } = input;
  const accounts = new AccountRepository(table, listingShards);
  const codes = new CodeStore(table, sealedKey(table, masterKey, 'code-pepper'));
  const throttle = new Throttle(table);
  const events = new SecurityEvents(table);
  const secondFactorWrites = new SecondFactorWrites(table);
  const recoveryCodes = new RecoveryCodeHasher(sealedKey(table, masterKey, 'recovery-code-pepper'));
  const apiTokens = new ApiTokenService(table);
  const decoy = new DecoyAccount(table);
  const devices = new DeviceTokens(table);
  const requestLimits = new RequestLimits({ throttle, limits });
  const guard = new LoginGuard(table, limits.passwordGuessing);
  const passkeyStore = new PasskeyStore(table);
  const relyingParty: RelyingParty = input.relyingParty ?? {
    id: 'localhost',
    name: input.totpIssuer ?? 'Account Service',
    origins: [new URL(input.baseUrl ?? 'http://localhost:3000').origin],
  };
  const changes = new SecurityChanges({ events, mailer, clock: table.clock });
  const codeMail = new CodeMail({ codes, throttle, mailer, limits });
  const registration = new Registration({ table, accounts, codes, codeMail, requestLimits });
  const challenges = new Challenges({
    table,
    signer,
    masterKey,
    accounts,
    throttle,
    requestLimits,
    secondFactorWrites,
    recoveryCodes,
    sessions,
    devices,
    events,
    changes,
    limits,
  });
  return {
    /** The account records themselves (tests and scripts that set up state). */
    repository: accounts,
    registration,
    login: new Login({
      table,
      accounts,
      decoy,
      guard,
      requestLimits,
      events,
      sessions,
      devices,
      challenges,
    }),
    challenges,
    passkeys: new Passkeys({
      store: passkeyStore,
      requestLimits,
      changes,
      relyingParty,
      clock: table.clock,
    }),
    passkeyLogin: new PasskeyLogin({
      table,
      store: passkeyStore,
      accounts,
      guard,
      requestLimits,
      signer,
      sessions,
      devices,
      events,
      relyingParty,
    }),
    totp: new SecondFactor({
      masterKey,
      writes: secondFactorWrites,
      recoveryCodes,
      requestLimits,
      changes,
      clock: table.clock,
      totpIssuer: input.totpIssuer ?? 'Account Service',
    }),
    email: new EmailBinding({ table, accounts, codes, codeMail, requestLimits, changes }),
    passwords: new PasswordChanges({
      table,
      accounts,
      codes,
      codeMail,
      mailer,
      decoy,
      requestLimits,
      sessions,
      apiTokens,
      changes,
      limits,
      baseUrl: input.baseUrl ?? 'http://localhost:3000',
    }),
    sessions: new AccountSessions({ sessions, devices, events }),
    securityEvents: events,
    admin: new BackOffice({
      table,
      listingShards,
      accounts,
      registration,
      requestLimits,
      secondFactorWrites,
      passkeys: passkeyStore,
      changes,
      usage: input.usage,
    }),
    apiTokens,
    /** Created before the first request (the auth warm-up); logins that name nobody read it. */
    decoy,
  };
}

export type Accounts = ReturnType<typeof buildAccounts>;
