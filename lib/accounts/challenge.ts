// The login challenge of an account with TOTP on (docs/DESIGN.md 5, 10): a `totp_challenge` token plus an item,
// answered at /auth/totp/verify with a TOTP code or a recovery code. One session per challenge, no TOTP
// time step twice, no recovery code twice: each is a transaction deleting the challenge together with
// spending the step or the code.

import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, epochSeconds } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { AccountContext } from './context.ts';
import { normalizeRecoveryCode } from './recovery-codes.ts';
import type { Account } from './repository.ts';
import { TokenError } from './tokens.ts';
import { checkTotp, openTotpSecret, totpRefusal } from './totp.ts';

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
const badRecoveryCode = () => errors.unauthorized('code: is invalid');

/**
 * POST /auth/totp/verify `{challenge_token, code}`: a session, once per challenge. `code` is a 6-digit TOTP
 * code (each time step once) or a recovery code (`xxxxx-xxxxx`, hyphen and case optional; each once).
 */
export async function verifyChallenge(
  ctx: AccountContext,
  input: { challenge_token: string; code: string },
  client: ClientInfo,
) {
  await ctx.limitIp(client.ip);
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
  const recovery = normalizeRecoveryCode(input.code);
  if (recovery) return useRecoveryCode(ctx, account, claims.jti, recovery, client);

  const secret = await openTotpSecret(ctx, account.id, account.totp_secret_enc);
  const checked = await checkTotp(secret, input.code, now, account.totp_last_step);
  if ('refused' in checked) {
    await ctx.events.record(account.id, 'login_failed', client);
    throw totpRefusal(checked.refused, 401);
  }
  try {
    await ctx.table.transact([
      { Delete: { Key: challengeKey(claims.jti), ConditionExpression: 'attribute_exists(pk)' } },
      ctx.secondFactor.totpLoginItem(account, checked.step),
    ]);
  } catch (error) {
    // The challenge was used, or this step accepted, by a concurrent request.
    if (error instanceof ConditionFailedError) {
      throw error.failedItems.includes(0) ? badChallenge() : totpRefusal('used', 401);
    }
    throw error;
  }
  const [session] = await Promise.all([
    ctx.sessionFor({ ...account, totp_last_step: checked.step }, client),
    ctx.events.record(account.id, 'login', client),
  ]);
  return session;
}

async function useRecoveryCode(
  ctx: AccountContext,
  account: Account,
  challengeJti: string,
  code: string,
  client: ClientInfo,
) {
  const digest = await ctx.recoveryCodes.digest(account.id, code);
  if (!account.recovery_code_digests?.has(digest)) {
    await ctx.events.record(account.id, 'login_failed', client);
    throw badRecoveryCode();
  }
  try {
    await ctx.table.transact([
      { Delete: { Key: challengeKey(challengeJti), ConditionExpression: 'attribute_exists(pk)' } },
      ctx.secondFactor.recoveryLoginItem(account, digest),
    ]);
  } catch (error) {
    // Used by a concurrent request (this challenge, or this code on another challenge).
    if (error instanceof ConditionFailedError) {
      throw error.failedItems.includes(0) ? badChallenge() : badRecoveryCode();
    }
    throw error;
  }
  const remaining = Math.max(0, (account.recovery_code_digests?.size ?? 1) - 1);
  const [session] = await Promise.all([
    ctx.sessionFor(account, client),
    ctx.events.record(account.id, 'login', client),
    ctx.securityChange(account, 'recovery_code_used', client, { kind: 'recovery_code_used', remaining }),
  ]);
  return session;
}
