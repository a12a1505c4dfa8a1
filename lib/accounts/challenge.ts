// The login challenge of an account with TOTP on (docs/DESIGN.md 5, 10): a `totp_challenge` token plus an item,
// answered at /auth/totp/verify with a TOTP code or a recovery code. One session per challenge, no TOTP
// time step twice, no recovery code twice: each is a transaction deleting the challenge together with
// spending the step or the code.

import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { conditionFailedAs, epochSeconds, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { DeviceTokens } from './device-tokens.ts';
import type { AccountLimits } from './limits.ts';
import { loginAnswer } from './login.ts';
import type { Account } from './model.ts';
import { normalizeRecoveryCode, type RecoveryCodeHasher } from './recovery-codes.ts';
import type { AccountRepository } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecondFactorWrites } from './second-factor-writes.ts';
import type { SecurityChanges } from './security-changes.ts';
import type { SecurityEvents } from './security-events.ts';
import type { SessionService } from './sessions.ts';
import type { Throttle } from './throttle.ts';
import { TokenError, type TokenSigner } from './tokens.ts';
import { checkTotp, openTotpSecret, totpRefusal } from './totp.ts';

export const challengeKey = (jti: string) => ({ pk: `challenge#${jti}`, sk: 'challenge' });

const badChallenge = () => errors.unauthorized('Challenge is invalid or expired');
const badRecoveryCode = () => errors.unauthorized('code: is invalid');

export interface ChallengesDeps {
  /** The challenge items, and the transactions that spend them. */
  table: Table;
  signer: TokenSigner;
  masterKey: () => Promise<MasterKey>;
  accounts: AccountRepository;
  throttle: Throttle;
  requestLimits: RequestLimits;
  secondFactorWrites: SecondFactorWrites;
  recoveryCodes: RecoveryCodeHasher;
  sessions: SessionService;
  devices: DeviceTokens;
  events: SecurityEvents;
  changes: SecurityChanges;
  limits: Pick<AccountLimits, 'challengeTtlSeconds' | 'challengeAttempts' | 'totpLogin'>;
}

export class Challenges {
  constructor(private readonly deps: ChallengesDeps) {}

  /**
   * `device` names the live device token the login presented (its digest): the challenge is then
   * answered against that device's own TOTP budget, and a session replaces the token with a new one.
   */
  async issue(account: Account, device?: string) {
    const { table, signer, limits } = this.deps;
    const now = table.clock();
    const signed = await signer.sign(
      { sub: account.id, scope: 'totp_challenge', sep: account.session_epoch },
      limits.challengeTtlSeconds,
      now,
    );
    await table.putNew({
      ...challengeKey(signed.jti),
      account_id: account.id,
      attempts: 0,
      ...(device ? { device } : {}),
      created_at: now.toISOString(),
      expires_at: epochSeconds(signed.expiresAt),
    });
    return {
      totp_required: true as const,
      challenge_token: signed.token,
      expires_at: isoWithOffset(signed.expiresAt),
      // How the challenge may be answered (docs/DESIGN.md 18): a passkey when the account holds one.
      methods: [
        'totp' as const,
        'recovery_code' as const,
        ...((account.passkey_count ?? 0) > 0 ? ['passkey' as const] : []),
      ],
    };
  }

  /**
   * POST /auth/totp/verify `{challenge_token, code}`: a session, once per challenge. `code` is a 6-digit
   * TOTP code (each time step once) or a recovery code (`xxxxx-xxxxx`, hyphen and case optional; each once).
   */
  async verify(input: { challenge_token: string; code: string }, client: ClientInfo) {
    const { table, signer, limits, throttle, accounts, events } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const now = table.clock();
    let claims: Awaited<ReturnType<TokenSigner['verify']>>;
    try {
      claims = await signer.verify(input.challenge_token, 'totp_challenge', now);
    } catch (error) {
      if (error instanceof TokenError) throw badChallenge();
      throw error;
    }
    // One attempt spent on this challenge, whatever the outcome; a dead or used challenge stops here.
    const challenge = await table
      .update<{ pk: string; sk: string; device?: string }>(challengeKey(claims.jti), {
        UpdateExpression: 'ADD attempts :one',
        ConditionExpression:
          'attribute_exists(pk) AND account_id = :sub AND attempts < :max AND #expires > :now',
        ExpressionAttributeNames: { '#expires': 'expires_at' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':sub': claims.sub,
          ':max': limits.challengeAttempts,
          ':now': epochSeconds(now),
        },
      })
      .catch(conditionFailedAs(badChallenge));
    // A challenge of a login that presented a live device token spends that device's budget, not the
    // account's: whoever holds the password elsewhere can spend the account's, and only that
    // (docs/ACCOUNTS.md "Second factor at login").
    await throttle.consume(
      challenge.device ? `totp-login#${claims.sub}#device#${challenge.device}` : `totp-login#${claims.sub}`,
      limits.totpLogin,
      'Too many attempts; try again later',
    );
    const account = await accounts.get(claims.sub);
    if (
      account?.status !== 'active' ||
      !account.totp_enabled ||
      !account.totp_secret_enc ||
      account.session_epoch !== claims.sep
    ) {
      throw badChallenge();
    }
    const recovery = normalizeRecoveryCode(input.code);
    if (recovery) return this.useRecoveryCode(account, claims.jti, recovery, client, challenge.device);

    const secret = await openTotpSecret(this.deps.masterKey, account.id, account.totp_secret_enc);
    const checked = await checkTotp(secret, input.code, now, account.totp_last_step);
    if ('refused' in checked) {
      await events.record(account.id, 'login_failed', client);
      throw totpRefusal(checked.refused, 401);
    }
    await table
      .transact([
        { Delete: { Key: challengeKey(claims.jti), ConditionExpression: 'attribute_exists(pk)' } },
        this.deps.secondFactorWrites.totpLoginItem(account, checked.step),
      ])
      // The challenge was used, or this step accepted, by a concurrent request.
      .catch(
        conditionFailedAs((error) =>
          error.failedItems.includes(0) ? badChallenge() : totpRefusal('used', 401),
        ),
      );
    return loginAnswer(this.deps, { ...account, totp_last_step: checked.step }, client, {
      replaces: challenge.device,
      method: 'totp',
    });
  }

  private async useRecoveryCode(
    account: Account,
    challengeJti: string,
    code: string,
    client: ClientInfo,
    device: string | undefined,
  ) {
    const { table, events } = this.deps;
    const digest = await this.deps.recoveryCodes.digest(account.id, code);
    if (!account.recovery_code_digests?.has(digest)) {
      await events.record(account.id, 'login_failed', client);
      throw badRecoveryCode();
    }
    await table
      .transact([
        { Delete: { Key: challengeKey(challengeJti), ConditionExpression: 'attribute_exists(pk)' } },
        this.deps.secondFactorWrites.recoveryLoginItem(account, digest),
      ])
      // Used by a concurrent request (this challenge, or this code on another challenge).
      .catch(
        conditionFailedAs((error) => (error.failedItems.includes(0) ? badChallenge() : badRecoveryCode())),
      );
    const remaining = Math.max(0, (account.recovery_code_digests?.size ?? 1) - 1);
    const [session] = await Promise.all([
      loginAnswer(this.deps, account, client, { replaces: device, method: 'recovery_code' }),
      this.deps.changes.record(account, 'recovery_code_used', client, {
        kind: 'recovery_code_used',
        remaining,
      }),
    ]);
    return session;
  }
}
