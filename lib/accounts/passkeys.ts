// The owner's passkeys (docs/DESIGN.md 18, docs/ACCOUNTS.md "Passkeys"): adding one (re-authenticated with
// the password, then the authenticator's answer to a single-use challenge), listing, removing (with the
// password). Each addition and removal is an event and a notice mail.
import { errors } from '#lib/core/errors.ts';
import { type Clock, ConditionFailedError, conditionFailedAs } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { Account } from './model.ts';
import {
  MAX_PASSKEYS,
  PASSKEY_CHALLENGE_SECONDS,
  type PasskeyFields,
  type PasskeyStore,
} from './passkey-store.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecurityChanges } from './security-changes.ts';
import { loadWebauthn, type RelyingParty, signedChallengeOf } from './webauthn.ts';

/** The browser's answer to creation options, as @simplewebauthn/browser's startRegistration gives it. */
export interface RegistrationAnswer {
  id: string;
  rawId: string;
  type: 'public-key';
  response: {
    clientDataJSON: string;
    attestationObject: string;
    transports?: string[] | undefined;
  };
  authenticatorAttachment?: 'platform' | 'cross-platform' | undefined;
}

export interface PasskeysDeps {
  store: PasskeyStore;
  requestLimits: RequestLimits;
  changes: SecurityChanges;
  relyingParty: RelyingParty;
  clock: Clock;
}

export function passkeyView(item: PasskeyFields) {
  return {
    id: item.credential_id,
    name: item.name,
    created_at: isoWithOffset(new Date(item.created_at)),
    last_used_at: item.last_used_at ? isoWithOffset(new Date(item.last_used_at)) : null,
  };
}

const notAccepted = () =>
  errors.badRequest('response: was not accepted (a used or expired challenge, or another site or device)');
const tooMany = () => errors.conflict(`An account holds at most ${MAX_PASSKEYS} passkeys`);
const sessionEnded = () => errors.unauthorized('Session is invalid or expired');

export class Passkeys {
  constructor(private readonly deps: PasskeysDeps) {}

  /** POST /auth/passkeys/register/options `{password}`: creation options with a single-use challenge. */
  async registerOptions(account: Account, input: { password: string }) {
    const { store, relyingParty } = this.deps;
    await this.deps.requestLimits.requirePassword(account, input.password);
    if ((account.passkey_count ?? 0) >= MAX_PASSKEYS) throw tooMany();
    const [existing, webauthn] = await Promise.all([store.list(account.id), loadWebauthn()]);
    const options = await webauthn.generateRegistrationOptions({
      rpName: relyingParty.name,
      rpID: relyingParty.id,
      userName: account.username,
      userDisplayName: account.username,
      // The user handle a discoverable credential gives back: the account id, no personal data.
      userID: new TextEncoder().encode(account.id),
      timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({
        id: passkey.credential_id,
        ...(passkey.transports ? { transports: passkey.transports } : {}),
      })),
      // A passkey is both factors at a passwordless login: held on the device and verified there.
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    await store.issueChallenge(options.challenge, { purpose: 'register', account_id: account.id });
    return options;
  }

  /** POST /auth/passkeys/register/verify `{response, name?}`: the new passkey (201). */
  async registerVerify(
    account: Account,
    input: { response: RegistrationAnswer; name?: string | undefined },
    client: ClientInfo,
  ) {
    const { store, relyingParty } = this.deps;
    const challenge = signedChallengeOf(input.response);
    if (!challenge) throw notAccepted();
    const taken = await store.takeChallenge(challenge, 'register').catch(conditionFailedAs(notAccepted));
    if (taken.account_id !== account.id) throw notAccepted();
    const webauthn = await loadWebauthn();
    const verified = await webauthn
      .verifyRegistrationResponse({
        response: { ...input.response, clientExtensionResults: {} },
        expectedChallenge: challenge,
        expectedOrigin: relyingParty.origins,
        expectedRPID: relyingParty.id,
        requireUserVerification: true,
      })
      .catch(() => undefined);
    if (!verified?.verified) throw notAccepted();
    const { credential } = verified.registrationInfo;
    const now = this.deps.clock().toISOString();
    const passkey = {
      credential_id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      ...(input.response.response.transports?.length
        ? { transports: input.response.response.transports }
        : {}),
      name: input.name ?? 'Passkey',
      created_at: now,
    };
    await store.add(account, passkey).catch(async (error: unknown) => {
      if (!(error instanceof ConditionFailedError)) throw error;
      if (!error.failedItems.includes(2)) throw errors.conflict('This passkey is already registered');
      // The account is full, or was reset or disabled since this session was checked (its session ended).
      throw (await store.list(account.id)).length >= MAX_PASSKEYS ? tooMany() : sessionEnded();
    });
    await this.deps.changes.record(account, 'passkey_added', client, { kind: 'passkey_added' });
    return passkeyView(passkey);
  }

  /** GET /auth/passkeys: the caller's passkeys, oldest first. */
  async list(account: Account) {
    const passkeys = await this.deps.store.list(account.id);
    return passkeys
      .map(passkeyView)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** DELETE /auth/passkeys/{id} `{password}`: removes it; it no longer signs anyone in. */
  async remove(account: Account, id: string, input: { password: string }, client: ClientInfo) {
    await this.deps.requestLimits.requirePassword(account, input.password);
    await this.deps.store
      .remove(account.id, id)
      .catch(conditionFailedAs(() => errors.notFound('passkey not found')));
    await this.deps.changes.record(account, 'passkey_removed', client, { kind: 'passkey_removed' });
    return { id, removed: true as const };
  }
}
