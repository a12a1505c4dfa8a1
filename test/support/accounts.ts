// Creates accounts and sessions straight through the repositories, for tests of other capabilities.
import { randomBytes } from 'node:crypto';
import type { AccountLimits } from '#lib/accounts/limits.ts';
import type { Account } from '#lib/accounts/model.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import type { SessionService } from '#lib/accounts/sessions.ts';
import type { Role } from '#lib/http/types.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { testDeps } from './deps.ts';
import { apiEvent, lambdaContext, parseBody } from './events.ts';
import type { memoryMailer } from './mail.ts';

export interface TestAccount {
  account: Account;
  token: string;
  password: string;
  headers: { authorization: string };
}

let passwordHash: Promise<string> | undefined;
export const TEST_PASSWORD = 'correct horse battery';

let defaultSessions: SessionService | undefined;
let accountRepository: AccountRepository | undefined;

/** The session service of this test file (built by testDeps, as production builds it). */
export function testSessions(): SessionService {
  defaultSessions ??= testDeps().sessions;
  return defaultSessions;
}

export async function createTestAccount(options: { role?: Role; username?: string; email?: string } = {}) {
  passwordHash ??= hashPassword(TEST_PASSWORD);
  const suffix = randomBytes(4).toString('hex');
  const sessions = testSessions();
  // The account domain's repository, as production builds it (with the listing's shards for the claims).
  accountRepository ??= testDeps().accounts.repository;
  const account = await accountRepository.create({
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

// --- the account capability's own harness ---------------------------------------------------------

/** A clock the test moves by hand (starts at the real time, so TTL arithmetic stays realistic). */
export function movableClock(start = Date.now()) {
  let now = start;
  const clock = () => new Date(now);
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    set(date: Date | number) {
      now = typeof date === 'number' ? date : date.getTime();
    },
  });
}

export interface HarnessOptions {
  clock?: () => Date;
  limits?: Partial<AccountLimits>;
  mailer?: Mailer;
  bootstrap?: { username?: string; email?: string; password?: string };
  /** `admin.require_second_factor` (default: off, as outside production). */
  requireAdminSecondFactor?: boolean;
  /** `auth.challenge` settings replaced (proof of work; default: not required). */
  challenge?: Partial<AppConfig['auth']['challenge']>;
  /** `auth.providers` (default: none). */
  signInProviders?: AppConfig['auth']['providers'];
}

export interface CallOptions {
  token?: string;
  ip?: string;
  headers?: Record<string, string>;
  /** Another group's handler of the same deps (default: accounts), e.g. `files` for API tokens. */
  group?: 'accounts' | 'files' | 'payments' | 'shares';
}

export interface CallResult<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: { code: number; message: string; data: T };
  raw: string;
}

/**
 * The accounts group's handler over deps of the test's own (clock, limits, mailer), called in process
 * with API Gateway events. The IP limit is off unless the test sets it.
 */
export function authHarness(options: HarnessOptions = {}) {
  const deps = testDeps({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.mailer ? { mailer: options.mailer } : {}),
    limits: { ipPerMinute: 0, ...options.limits },
    bootstrap: options.bootstrap ?? {},
    ...(options.signInProviders ? { signInProviders: options.signInProviders } : {}),
    ...(options.requireAdminSecondFactor === undefined
      ? {}
      : { requireAdminSecondFactor: options.requireAdminSecondFactor }),
    ...(options.challenge ? { challenge: options.challenge } : {}),
  });
  const { accounts, table, sessions, signer } = deps;
  const mail = deps.mail as ReturnType<typeof memoryMailer>;
  const handler = deps.handlers.accounts;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response data of many shapes
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    callOptions: CallOptions = {},
  ): Promise<CallResult<T>> {
    const headers: Record<string, string> = { ...callOptions.headers };
    if (callOptions.token) headers.authorization = `Bearer ${callOptions.token}`;
    const result = await deps.handlers[callOptions.group ?? 'accounts'](
      apiEvent({
        method,
        path,
        body: body as object | undefined,
        headers,
        ...(callOptions.ip ? { sourceIp: callOptions.ip } : {}),
      }),
      lambdaContext,
    );
    const raw = result.body ?? '';
    return {
      status: result.statusCode ?? 0,
      headers: (result.headers ?? {}) as Record<string, string>,
      body: (raw ? parseBody(result) : null) as CallResult<T>['body'],
      raw,
    };
  }
  let counter = 0;
  /** Registers an ordinary user through the real flow; returns its credentials and a session. */
  async function registerUser(input: { username?: string; email?: string; password?: string } = {}) {
    const suffix = `${Date.now().toString(36)}${(counter++).toString(36)}${randomBytes(2).toString('hex')}`;
    const username = input.username ?? `u_${suffix}`;
    const email = input.email ?? `${username.toLowerCase()}@example.test`;
    const password = input.password ?? 'a-good-password-1';
    const sent = await call('POST', '/auth/register/code', { email });
    if (sent.status !== 200) throw new Error(`register/code: ${sent.status} ${sent.raw}`);
    const code = mail.codeFor(email);
    const registered = await call('POST', '/auth/register', { username, email, code, password });
    if (registered.status !== 201) throw new Error(`register: ${registered.status} ${registered.raw}`);
    const login = await call('POST', '/auth/login', { username, password });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.raw}`);
    return {
      id: registered.body.data.id as string,
      username,
      email,
      password,
      token: login.body.data.token as string,
      /** What the login answered for this device's next login (docs/ACCOUNTS.md "Device tokens"). */
      deviceToken: login.body.data.device_token as string,
    };
  }
  /**
   * Turns TOTP on for a registered user through setup and enable; returns the secret and the recovery
   * codes enable showed. `at` gives the time whose code enables (default: the harness clock's now).
   */
  async function enableTotp(
    user: { token: string; password: string },
    at: () => Date = options.clock ?? (() => new Date()),
  ) {
    const { generate } = await import('otplib');
    const setup = await call('POST', '/auth/totp/setup', { password: user.password }, { token: user.token });
    if (setup.status !== 200) throw new Error(`totp/setup: ${setup.status} ${setup.raw}`);
    const secret = setup.body.data.secret as string;
    const code = await generate({ secret, epoch: Math.floor(at().getTime() / 1000) });
    const enabled = await call('POST', '/auth/totp/enable', { code }, { token: user.token });
    if (enabled.status !== 200) throw new Error(`totp/enable: ${enabled.status} ${enabled.raw}`);
    return { secret, recoveryCodes: enabled.body.data.recovery_codes as string[], setup: setup.body.data };
  }
  return { deps, accounts, table, sessions, signer, mail, handler, call, registerUser, enableTotp };
}
