// TOTP (RFC 6238, SHA-1, 6 digits, 30 s) with otplib 13: secrets sealed by the master key, one step of
// drift, and a replay guard (a time step once accepted for an account is never accepted again).
import { TokenError } from '../auth/tokens.ts';
import { ConditionFailedError, epochSeconds } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import { isoWithOffset } from '../time.ts';
import { type AccountContext, accountChanged } from './context.ts';
import type { Account } from './repository.ts';

export const TOTP_PERIOD_SECONDS = 30;

const secretContext = (accountId: string) => ({ purpose: 'totp', account: accountId });

export async function sealTotpSecret(ctx: AccountContext, accountId: string, secret: string) {
  return (await ctx.masterKey()).encrypt(secret, secretContext(accountId));
}

export async function openTotpSecret(ctx: AccountContext, accountId: string, sealed: string) {
  return (await (await ctx.masterKey()).decrypt(sealed, secretContext(accountId))).toString('utf8');
}

// otplib (with its hash and base32 modules) is evaluated on first TOTP use, not at every cold start of
// the auth group: most of its requests never touch TOTP. In the bundle it stays inside.
let otplib: Promise<typeof import('otplib')> | undefined;
function loadOtplib(): Promise<typeof import('otplib')> {
  otplib ??= import('otplib').catch((error: unknown) => {
    otplib = undefined;
    throw error;
  });
  return otplib;
}

/** The time step the code belongs to (now, or one step either side), or undefined. */
export async function matchTotp(
  secret: string,
  code: string,
  now: Date,
  lastStep: number | undefined,
): Promise<number | undefined> {
  const { verify } = await loadOtplib();
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: epochSeconds(now),
      epochTolerance: TOTP_PERIOD_SECONDS,
      ...(lastStep === undefined ? {} : { afterTimeStep: lastStep }),
    });
    if (!result.valid) return undefined;
    const step = (result as { timeStep?: unknown }).timeStep;
    return typeof step === 'number' ? step : undefined;
  } catch {
    return undefined;
  }
}

const invalidTotp = () => errors.badRequest('code: is invalid');

// --- login challenge -------------------------------------------------------------------------------

export const challengeKey = (jti: string) => ({ pk: `challenge#${jti}`, sk: 'challenge' });

export async function issueChallenge(ctx: AccountContext, account: Account) {
  const now = ctx.now();
  const signed = await ctx.signer.sign(
    { sub: account.id, scope: 'totp_challenge', sep: account.session_epoch },
    ctx.limits.challengeTtlSeconds,
    now,
  );
  await ctx.table.putNew({
    ...challengeKey(signed.jti),
    account_id: account.id,
    attempts: 0,
    created_at: now.toISOString(),
    expires_at: epochSeconds(signed.expiresAt),
  });
  return {
    totp_required: true as const,
    challenge_token: signed.token,
    expires_at: isoWithOffset(signed.expiresAt),
  };
}

const badChallenge = () => errors.unauthorized('Challenge is invalid or expired');

/** POST /auth/totp/verify `{challenge_token, code}`: a session, once per challenge and per time step. */
export async function verifyChallenge(
  ctx: AccountContext,
  input: { challenge_token: string; code: string },
  sourceIp: string,
) {
  await ctx.limitIp(sourceIp);
  const now = ctx.now();
  let claims: Awaited<ReturnType<typeof ctx.signer.verify>>;
  try {
    claims = await ctx.signer.verify(input.challenge_token, 'totp_challenge', now);
  } catch (error) {
    if (error instanceof TokenError) throw badChallenge();
    throw error;
  }
  // One attempt spent on this challenge, whatever the outcome; a dead or used challenge stops here.
  try {
    await ctx.table.update(challengeKey(claims.jti), {
      UpdateExpression: 'ADD attempts :one',
      ConditionExpression:
        'attribute_exists(pk) AND account_id = :sub AND attempts < :max AND #expires > :now',
      ExpressionAttributeNames: { '#expires': 'expires_at' },
      ExpressionAttributeValues: {
        ':one': 1,
        ':sub': claims.sub,
        ':max': ctx.limits.challengeAttempts,
        ':now': epochSeconds(now),
      },
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) throw badChallenge();
    throw error;
  }
  await ctx.throttle.consume(
    `totp-login#${claims.sub}`,
    ctx.limits.totpLogin,
    'Too many attempts; try again later',
  );
  const account = await ctx.accounts.get(claims.sub);
  if (
    account?.status !== 'active' ||
    !account.totp_enabled ||
    !account.totp_secret_enc ||
    account.session_epoch !== claims.sep
  ) {
    throw badChallenge();
  }
  const secret = await openTotpSecret(ctx, account.id, account.totp_secret_enc);
  const step = await matchTotp(secret, input.code, now, account.totp_last_step);
  if (step === undefined) throw errors.unauthorized('code: is invalid');
  try {
    await ctx.table.transact([
      { Delete: { Key: challengeKey(claims.jti), ConditionExpression: 'attribute_exists(pk)' } },
      ctx.accounts.totpLoginStepItem(account, step),
    ]);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw errors.unauthorized('code: is invalid');
    throw error;
  }
  return ctx.sessionFor({ ...account, totp_last_step: step });
}

// --- setup, enable, disable ------------------------------------------------------------------------

export function securityState(account: Account) {
  return {
    totp_enabled: account.totp_enabled,
    totp_pending: !account.totp_enabled && !!account.totp_pending_enc,
    email: account.email,
    email_verified: account.email_verified,
  };
}

/** POST /auth/totp/setup: a new pending secret (returned once) and its otpauth link. */
export async function setupTotp(ctx: AccountContext, account: Account) {
  if (account.totp_enabled) throw errors.conflict('TOTP is already enabled');
  const { generateSecret, generateURI } = await loadOtplib();
  const secret = generateSecret({ length: 20 });
  const sealed = await sealTotpSecret(ctx, account.id, secret);
  try {
    await ctx.accounts.setPendingTotpSecret(account.id, sealed);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw errors.conflict('TOTP is already enabled');
    throw error;
  }
  const label = account.email ?? account.username;
  return { secret, uri: generateURI({ issuer: ctx.totpIssuer, label, secret }) };
}

/** POST /auth/totp/enable `{code}`: the pending secret becomes the account's, proven by a valid code. */
export async function enableTotp(ctx: AccountContext, account: Account, input: { code: string }) {
  await ctx.limitCredentialChecks(account.id);
  if (account.totp_enabled) throw errors.conflict('TOTP is already enabled');
  const pending = account.totp_pending_enc;
  if (!pending) throw errors.conflict('No TOTP setup is pending: call /auth/totp/setup first');
  const secret = await openTotpSecret(ctx, account.id, pending);
  const step = await matchTotp(secret, input.code, ctx.now(), account.totp_last_step);
  if (step === undefined) throw invalidTotp();
  let updated: Account;
  try {
    updated = await ctx.accounts.enableTotp(account.id, pending, step);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw invalidTotp();
    throw error;
  }
  return securityState(updated);
}

/** POST /auth/totp/disable `{code}` or `{password}`: each one given must be right. */
export async function disableTotp(
  ctx: AccountContext,
  account: Account,
  input: { code?: string; password?: string },
  verifyPassword: (hash: string, password: string) => Promise<boolean>,
) {
  await ctx.limitCredentialChecks(account.id);
  if (!account.totp_enabled || !account.totp_secret_enc) throw errors.conflict('TOTP is not enabled');
  let step: number | undefined;
  if (input.code !== undefined) {
    const secret = await openTotpSecret(ctx, account.id, account.totp_secret_enc);
    step = await matchTotp(secret, input.code, ctx.now(), account.totp_last_step);
    if (step === undefined) throw invalidTotp();
  }
  if (input.password !== undefined && !(await verifyPassword(account.password_hash, input.password))) {
    throw errors.badRequest('password: is incorrect');
  }
  let updated: Account;
  try {
    updated = await ctx.accounts.disableTotp(account.id, account.totp_secret_enc, step);
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      // A code's step may have been spent meanwhile: the code then no longer counts.
      if (step !== undefined) throw invalidTotp();
      throw accountChanged();
    }
    throw error;
  }
  return securityState(updated);
}
