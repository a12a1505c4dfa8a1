// TOTP (RFC 6238, SHA-1, 6 digits, 30 s) with otplib 13: secrets sealed by the master key, one step of
// drift, a replay guard (a time step once accepted for an account is never accepted again), and the
// recovery codes that come with it. Setup and new recovery codes need the current password.

import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, epochSeconds } from '#lib/platform/db/table.ts';
import type { ClientInfo } from './client.ts';
import { type AccountContext, accountChanged, requirePassword } from './context.ts';
import { verifyPassword } from './passwords.ts';
import { qrDataUrl } from './qr.ts';
import { generateRecoveryCodes } from './recovery-codes.ts';
import type { Account } from './repository.ts';

export const TOTP_PERIOD_SECONDS = 30;

const secretContext = (accountId: string) => ({ purpose: 'totp', account: accountId });

export async function sealTotpSecret(ctx: AccountContext, accountId: string, secret: string) {
  return (await ctx.masterKey()).encrypt(secret, secretContext(accountId));
}

export async function openTotpSecret(ctx: AccountContext, accountId: string, sealed: string) {
  return (await (await ctx.masterKey()).decrypt(sealed, secretContext(accountId))).toString('utf8');
}

// otplib (with its hash and base32 modules) is loaded on first TOTP use, not at every cold start of the
// auth group: most of its requests never touch TOTP. It is not in the bundle either (V8 would compile it at
// every cold start); it is installed beside it (infra/bundling.ts TOTP_PACKAGES).
let otplib: Promise<typeof import('otplib')> | undefined;
function loadOtplib(): Promise<typeof import('otplib')> {
  otplib ??= import('otplib').catch((error: unknown) => {
    otplib = undefined;
    throw error;
  });
  return otplib;
}

/** The time step the code belongs to (now, or one step either side, after `lastStep`), or undefined. */
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

export type TotpCheck = { step: number } | { refused: 'invalid' | 'used' };

/**
 * Checks a code against the secret, telling a wrong code from a replayed one: a code of a time step at or
 * before the last accepted step is "already used" (the code the caller just logged in with, typically).
 */
export async function checkTotp(
  secret: string,
  code: string,
  now: Date,
  lastStep: number | undefined,
): Promise<TotpCheck> {
  const step = await matchTotp(secret, code, now, undefined);
  if (step === undefined) return { refused: 'invalid' };
  if (lastStep !== undefined && step <= lastStep) return { refused: 'used' };
  return { step };
}

export const totpRefusal = (reason: 'invalid' | 'used', status: 400 | 401 = 400) => {
  const message = reason === 'used' ? 'code: was already used; wait for the next code' : 'code: is invalid';
  return status === 401 ? errors.unauthorized(message) : errors.badRequest(message);
};

export function securityState(account: Account) {
  return {
    totp_enabled: account.totp_enabled,
    totp_pending: !account.totp_enabled && !!account.totp_pending_enc,
    email: account.email,
    email_verified: account.email_verified,
    recovery_codes_remaining: account.totp_enabled ? (account.recovery_code_digests?.size ?? 0) : 0,
  };
}

/** POST /auth/totp/setup `{password}`: a new pending secret (returned once), its otpauth link and QR code. */
export async function setupTotp(ctx: AccountContext, account: Account, input: { password: string }) {
  if (account.totp_enabled) throw errors.conflict('TOTP is already enabled');
  await requirePassword(ctx, account, input.password);
  const { generateSecret, generateURI } = await loadOtplib();
  const secret = generateSecret({ length: 20 });
  const sealed = await sealTotpSecret(ctx, account.id, secret);
  try {
    await ctx.secondFactor.setPendingSecret(account.id, sealed);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw errors.conflict('TOTP is already enabled');
    throw error;
  }
  const label = account.email ?? account.username;
  const uri = generateURI({ issuer: ctx.totpIssuer, label, secret });
  return { secret, uri, qr_data_url: await qrDataUrl(uri) };
}

/**
 * POST /auth/totp/enable `{code}`: the pending secret becomes the account's, proven by a valid code; the
 * answer carries the first recovery codes, shown this once.
 */
export async function enableTotp(
  ctx: AccountContext,
  account: Account,
  input: { code: string },
  client: ClientInfo,
) {
  await ctx.limitCredentialChecks(account.id);
  if (account.totp_enabled) throw errors.conflict('TOTP is already enabled');
  const pending = account.totp_pending_enc;
  if (!pending) throw errors.conflict('No TOTP setup is pending: call /auth/totp/setup first');
  const secret = await openTotpSecret(ctx, account.id, pending);
  const checked = await checkTotp(secret, input.code, ctx.now(), account.totp_last_step);
  if ('refused' in checked) throw totpRefusal(checked.refused);
  const codes = generateRecoveryCodes();
  let updated: Account;
  try {
    updated = await ctx.secondFactor.enable(
      account.id,
      pending,
      checked.step,
      await ctx.recoveryCodes.digests(account.id, codes),
    );
  } catch (error) {
    // Another request enabled TOTP or spent this step meanwhile.
    if (error instanceof ConditionFailedError) throw totpRefusal('used');
    throw error;
  }
  await ctx.securityChange(updated, 'totp_enabled', client, { kind: 'totp_enabled' });
  return { ...securityState(updated), recovery_codes: codes };
}

/** POST /auth/totp/disable `{code}` or `{password}`: each one given must be right. */
export async function disableTotp(
  ctx: AccountContext,
  account: Account,
  input: { code?: string; password?: string },
  client: ClientInfo,
) {
  if (!account.totp_enabled || !account.totp_secret_enc) throw errors.conflict('TOTP is not enabled');
  await ctx.limitCredentialChecks(account.id);
  let step: number | undefined;
  if (input.code !== undefined) {
    const secret = await openTotpSecret(ctx, account.id, account.totp_secret_enc);
    const checked = await checkTotp(secret, input.code, ctx.now(), account.totp_last_step);
    if ('refused' in checked) throw totpRefusal(checked.refused);
    step = checked.step;
  }
  if (input.password !== undefined && !(await verifyPassword(account.password_hash, input.password))) {
    throw errors.badRequest('password: is incorrect');
  }
  let updated: Account;
  try {
    updated = await ctx.secondFactor.disable(account.id, account.totp_secret_enc, step);
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      // A code's step may have been spent meanwhile: the code then no longer counts.
      if (step !== undefined) throw totpRefusal('used');
      throw accountChanged();
    }
    throw error;
  }
  await ctx.securityChange(updated, 'totp_disabled', client, { kind: 'totp_disabled' });
  return securityState(updated);
}

/** POST /auth/totp/recovery-codes `{password}`: a new set of recovery codes; the old set stops working. */
export async function regenerateRecoveryCodes(
  ctx: AccountContext,
  account: Account,
  input: { password: string },
  client: ClientInfo,
) {
  if (!account.totp_enabled || !account.totp_secret_enc) throw errors.conflict('TOTP is not enabled');
  await requirePassword(ctx, account, input.password);
  const codes = generateRecoveryCodes();
  let updated: Account;
  try {
    updated = await ctx.secondFactor.replaceRecoveryCodes(
      account,
      await ctx.recoveryCodes.digests(account.id, codes),
    );
  } catch (error) {
    if (error instanceof ConditionFailedError) throw accountChanged();
    throw error;
  }
  await ctx.securityChange(updated, 'recovery_codes_regenerated', client, {
    kind: 'recovery_codes_regenerated',
  });
  return { recovery_codes: codes, recovery_codes_remaining: codes.length };
}
