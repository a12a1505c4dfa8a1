// The owner's TOTP settings (docs/SPEC.md 3.1, docs/DESIGN.md 10): setup, enable, disable, and the recovery
// codes that come with it. Setup and new recovery codes need the current password.

import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { type Clock, conditionFailedAs } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { Account } from './model.ts';
import { verifyPassword } from './passwords.ts';
import { qrDataUrl } from './qr.ts';
import { generateRecoveryCodes, type RecoveryCodeHasher } from './recovery-codes.ts';
import { accountChanged } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecondFactorWrites } from './second-factor-writes.ts';
import type { SecurityChanges } from './security-changes.ts';
import { checkTotp, loadOtplib, openTotpSecret, sealTotpSecret, totpRefusal } from './totp.ts';

export function securityState(account: Account) {
  return {
    totp_enabled: account.totp_enabled,
    totp_pending: !account.totp_enabled && !!account.totp_pending_enc,
    email: account.email,
    email_verified: account.email_verified,
    recovery_codes_remaining: account.totp_enabled ? (account.recovery_code_digests?.size ?? 0) : 0,
    passkeys: account.passkey_count ?? 0,
    /** A pending deletion's due time (docs/ACCOUNTS.md "Deleting an account"); a login cancels it. */
    deletion_scheduled_for: account.deletion_scheduled_for
      ? isoWithOffset(new Date(account.deletion_scheduled_for))
      : null,
  };
}

const alreadyEnabled = () => errors.conflict('TOTP is already enabled');
const notEnabled = () => errors.conflict('TOTP is not enabled');

export interface SecondFactorDeps {
  masterKey: () => Promise<MasterKey>;
  writes: SecondFactorWrites;
  recoveryCodes: RecoveryCodeHasher;
  requestLimits: RequestLimits;
  changes: SecurityChanges;
  clock: Clock;
  /** Shown by authenticator apps next to the account name. */
  totpIssuer: string;
}

export class SecondFactor {
  constructor(private readonly deps: SecondFactorDeps) {}

  /** POST /auth/totp/setup `{password}`: a new pending secret (returned once), its otpauth link and QR code. */
  async setup(account: Account, input: { password: string }) {
    if (account.totp_enabled) throw alreadyEnabled();
    await this.deps.requestLimits.requirePassword(account, input.password);
    const { generateSecret, generateURI } = await loadOtplib();
    const secret = generateSecret({ length: 20 });
    const sealed = await sealTotpSecret(this.deps.masterKey, account.id, secret);
    await this.deps.writes.setPendingSecret(account.id, sealed).catch(conditionFailedAs(alreadyEnabled));
    const label = account.email ?? account.username;
    const uri = generateURI({ issuer: this.deps.totpIssuer, label, secret });
    return { secret, uri, qr_data_url: await qrDataUrl(uri) };
  }

  /**
   * POST /auth/totp/enable `{code}`: the pending secret becomes the account's, proven by a valid code; the
   * answer carries the first recovery codes, shown this once.
   */
  async enable(account: Account, input: { code: string }, client: ClientInfo) {
    await this.deps.requestLimits.limitCredentialChecks(account.id);
    if (account.totp_enabled) throw alreadyEnabled();
    const pending = account.totp_pending_enc;
    if (!pending) throw errors.conflict('No TOTP setup is pending: call /auth/totp/setup first');
    const step = await this.checkCode(account, pending, input.code);
    const codes = generateRecoveryCodes();
    const digests = await this.deps.recoveryCodes.digests(account.id, codes);
    const updated = await this.deps.writes
      .enable(account.id, pending, step, digests)
      // Another request enabled TOTP or spent this step meanwhile.
      .catch(conditionFailedAs(() => totpRefusal('used')));
    await this.deps.changes.record(updated, 'totp_enabled', client, { kind: 'totp_enabled' });
    return { ...securityState(updated), recovery_codes: codes };
  }

  /** POST /auth/totp/disable `{code}` or `{password}`: each one given must be right. */
  async disable(account: Account, input: { code?: string; password?: string }, client: ClientInfo) {
    if (!account.totp_enabled || !account.totp_secret_enc) throw notEnabled();
    await this.deps.requestLimits.limitCredentialChecks(account.id);
    const step =
      input.code === undefined
        ? undefined
        : await this.checkCode(account, account.totp_secret_enc, input.code);
    if (input.password !== undefined && !(await verifyPassword(account.password_hash, input.password))) {
      throw errors.badRequest('password: is incorrect');
    }
    const updated = await this.deps.writes
      .disable(account.id, account.totp_secret_enc, step)
      // A code's step may have been spent meanwhile: the code then no longer counts.
      .catch(conditionFailedAs(() => (step !== undefined ? totpRefusal('used') : accountChanged())));
    await this.deps.changes.record(updated, 'totp_disabled', client, { kind: 'totp_disabled' });
    return securityState(updated);
  }

  /** POST /auth/totp/recovery-codes `{password}`: a new set of recovery codes; the old set stops working. */
  async regenerateRecoveryCodes(account: Account, input: { password: string }, client: ClientInfo) {
    if (!account.totp_enabled || !account.totp_secret_enc) throw notEnabled();
    await this.deps.requestLimits.requirePassword(account, input.password);
    const codes = generateRecoveryCodes();
    const digests = await this.deps.recoveryCodes.digests(account.id, codes);
    const updated = await this.deps.writes
      .replaceRecoveryCodes(account, digests)
      .catch(conditionFailedAs(accountChanged));
    await this.deps.changes.record(updated, 'recovery_codes_regenerated', client, {
      kind: 'recovery_codes_regenerated',
    });
    return { recovery_codes: codes, recovery_codes_remaining: codes.length };
  }

  /** The time step of a right code for the sealed secret; 400 for a wrong or replayed one. */
  private async checkCode(account: Account, sealed: string, code: string): Promise<number> {
    const secret = await openTotpSecret(this.deps.masterKey, account.id, sealed);
    const checked = await checkTotp(secret, code, this.deps.clock(), account.totp_last_step);
    if ('refused' in checked) throw totpRefusal(checked.refused);
    return checked.step;
  }
}
