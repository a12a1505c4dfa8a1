// Builds the account domain from what it uses, once per container (or per test with its own clock and
// mailer): the shared pieces once, then one service per flow area. Production and tests call the same;
// the sessions, signer, records and API tokens come from build-sessions.ts (every authenticating group's),
// and are returned again with the password guard, so other domains name what they read as Pick<Accounts>.
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { AccountDeletion } from './account-deletion.ts';
import { AccountSessions } from './account-sessions.ts';
import { BackOffice } from './back-office.ts';
import { buildRequestLimits } from './build-request-limits.ts';
import { buildPasswordGuard, type Sessions } from './build-sessions.ts';
import { Challenges } from './challenge.ts';
import { CodeMail } from './code-mail.ts';
import { CodeStore } from './codes.ts';
import { DecoyAccount } from './decoy.ts';
import { DeviceTokens } from './device-tokens.ts';
import { EmailBinding } from './email.ts';
import type { AccountLimits } from './limits.ts';
import { Login } from './login.ts';
import { OAuthProviders, type OAuthProvidersDeps } from './oauth-providers.ts';
import { PasskeyLogin } from './passkey-login.ts';
import { PasskeyStore } from './passkey-store.ts';
import { Passkeys } from './passkeys.ts';
import { PasswordChanges } from './password-changes.ts';
import type { ProofOfWork } from './proof-of-work.ts';
import { ProviderSignIn } from './provider-sign-in.ts';
import { RecoveryCodeHasher } from './recovery-codes.ts';
import { Registration } from './registration.ts';
import { sealedKey } from './sealed-key.ts';
import { SecondFactor } from './second-factor.ts';
import { SecondFactorWrites } from './second-factor-writes.ts';
import { SecurityChanges } from './security-changes.ts';
import type { AccountUsageReader } from './usage.ts';
import type { RelyingParty } from './webauthn.ts';

export interface AccountsInput {
  table: Table;
  mailer: Mailer;
  masterKey: () => Promise<MasterKey>;
  /** What build-sessions.ts built for this group. */
  shared: Sessions;
  limits?: Partial<AccountLimits>;
  /** `auth.totp_issuer`: shown by authenticator apps next to the account name. */
  totpIssuer: string;
  /** Storage use for the back-office listing (lib/files usageReader). */
  usage: AccountUsageReader;
  /** `base_url`: reset links open the console there. */
  baseUrl: string;
  /** Passkeys' relying party (`auth.passkeys`, docs/DESIGN.md 18). */
  relyingParty: RelyingParty;
  /** Checks the solved challenge of registration and reset-code sends (lib/wiring/shared.ts). */
  proofOfWork: ProofOfWork;
  /** `auth.providers` and where their client secrets are read. */
  signIn: Pick<OAuthProvidersDeps, 'providers' | 'secretOf'>;
}

export function buildAccounts(input: AccountsInput) {
  const { table, mailer, masterKey, shared } = input;
  const { sessions, signer, apiTokens, securityEvents: events, repository: accounts } = shared;
  const { limits, throttle, requestLimits } = buildRequestLimits({ table, limits: input.limits });
  const codes = new CodeStore({ table, pepper: sealedKey(table, masterKey, 'code-pepper') });
  const secondFactorWrites = new SecondFactorWrites({ table });
  const recoveryCodes = new RecoveryCodeHasher({
    pepper: sealedKey(table, masterKey, 'recovery-code-pepper'),
  });
  const decoy = new DecoyAccount({ table });
  const devices = new DeviceTokens({ table });
  const { guard } = buildPasswordGuard({ table, limit: limits.passwordGuessing });
  const passkeyStore = new PasskeyStore({ table });
  const { relyingParty } = input;
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
    /** The account records: other domains read them, tests and scripts set up state with them. */
    repository: accounts,
    /** Signs cashier links (billing). */
    signer,
    /** Wrong share passwords back off as wrong account passwords do (lib/files/shares.ts). */
    guard,
    registration,
    proofOfWork: input.proofOfWork,
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
      totpIssuer: input.totpIssuer,
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
      passkeys: passkeyStore,
      devices,
      events,
      challenges,
      guard,
      limits,
      baseUrl: input.baseUrl,
    }),
    providerSignIn: new ProviderSignIn({
      table,
      accounts,
      providers: new OAuthProviders({ ...input.signIn, baseUrl: input.baseUrl }),
      requestLimits,
      sessions,
      devices,
      events,
      challenges,
      changes,
      baseUrl: input.baseUrl,
    }),
    sessions: new AccountSessions({ sessions, devices, events }),
    /** Closing an account after its grace (docs/ACCOUNTS.md "Deleting an account"). */
    deletion: new AccountDeletion({
      table,
      requestLimits,
      masterKey,
      recoveryCodes,
      listingShards: accounts.listingShards,
      changes,
    }),
    securityEvents: events,
    admin: new BackOffice({
      table,
      listingShards: accounts.listingShards,
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
