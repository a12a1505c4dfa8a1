// TOTP (RFC 6238, SHA-1, 6 digits, 30 s) with otplib 13: secrets sealed by the master key, one step of
// drift, and a replay guard (a time step once accepted for an account is never accepted again).

import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { epochSeconds } from '#lib/platform/db/table.ts';

/** otplib's default period: a code belongs to one 30-second time step. */
const TOTP_PERIOD_SECONDS = 30;

const secretContext = (accountId: string) => ({ purpose: 'totp', account: accountId });

export async function sealTotpSecret(masterKey: () => Promise<MasterKey>, accountId: string, secret: string) {
  return (await masterKey()).encrypt(secret, secretContext(accountId));
}

export async function openTotpSecret(masterKey: () => Promise<MasterKey>, accountId: string, sealed: string) {
  return (await (await masterKey()).decrypt(sealed, secretContext(accountId))).toString('utf8');
}

// otplib (with its hash and base32 modules) is loaded on first TOTP use, not at every cold start of the
// accounts group: most of its requests never touch TOTP. It is not in the bundle either (V8 would compile it at
// every cold start); it is installed beside it (infra/bundling.ts TOTP_PACKAGES).
let otplib: Promise<typeof import('otplib')> | undefined;
export function loadOtplib(): Promise<typeof import('otplib')> {
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
      epochTolerance: 30,
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
 * before the last accepted step is "already used" (the code the caller just logged in with, or turned TOTP
 * on with, typically), and so is the last accepted step's own code long after its window.
 */
export async function checkTotp(
  secret: string,
  code: string,
  now: Date,
  lastStep: number | undefined,
): Promise<TotpCheck> {
  const step = await matchTotp(secret, code, now, undefined);
  if (step === undefined)
    return (await isCodeOfStep(secret, code, lastStep)) ? { refused: 'used' } : { refused: 'invalid' };
  if (lastStep !== undefined && step <= lastStep) return { refused: 'used' };
  return { step };
}

async function isCodeOfStep(secret: string, code: string, step: number | undefined): Promise<boolean> {
  if (step === undefined) return false;
  const { generate } = await loadOtplib();
  return (await generate({ secret, epoch: step * TOTP_PERIOD_SECONDS })) === code.trim();
}

export const totpRefusal = (reason: 'invalid' | 'used', status: 400 | 401 = 400) => {
  const message = reason === 'used' ? 'code: was already used; wait for the next code' : 'code: is invalid';
  return status === 401 ? errors.unauthorized(message) : errors.badRequest(message);
};
