// Signing in with a passkey (docs/DESIGN.md 18): passwordless at both doors (by username, or by a
// discoverable credential), and as the second factor of a login whose password was right. Every refusal is
// the same 401; each challenge is taken once; the signature counter only grows. The password guard neither
// counts a refused assertion nor holds a passkey login: a signature is not guessed.
import { errors } from '#lib/core/errors.ts';
import {
  conditionFailedAs,
  conditionFailedReturns,
  epochSeconds,
  type Table,
} from '#lib/platform/db/table.ts';
import { challengeKey } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import type { DeviceTokens } from './device-tokens.ts';
import { loginAnswer } from './login.ts';
import type { Account, Role } from './model.ts';
import { PASSKEY_CHALLENGE_SECONDS, type PasskeyItem, type PasskeyStore } from './passkey-store.ts';
import type { AccountRepository } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecurityEvents } from './security-events.ts';
import type { SessionService } from './sessions.ts';
import { TokenError, type TokenSigner } from './tokens.ts';
import { loadWebauthn, type RelyingParty, signedChallengeOf } from './webauthn.ts';

/** The browser's answer to request options, as @simplewebauthn/browser's startAuthentication gives it. */
export interface AssertionAnswer {
  id: string;
  rawId: string;
  type: 'public-key';
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string | undefined;
  };
  authenticatorAttachment?: 'platform' | 'cross-platform' | undefined;
}

export interface PasskeyLoginDeps {
  table: Table;
  store: PasskeyStore;
  accounts: AccountRepository;
  requestLimits: RequestLimits;
  signer: TokenSigner;
  sessions: SessionService;
  devices: DeviceTokens;
  events: SecurityEvents;
  relyingParty: RelyingParty;
}

/** The one answer to every refused passkey login, whatever the reason. */
export const passkeyRefusal = () => errors.unauthorized('Passkey not accepted');

/** A challenge bound to no account can be answered by nobody's credential (a name nobody holds). */
const NOBODY = 'nobody';

export class PasskeyLogin {
  constructor(private readonly deps: PasskeyLoginDeps) {}

  /**
   * POST /auth/passkeys/login/options `{username?}` (and the administrators' door): request options. With a
   * username (or e-mail) that account's passkeys are allowed; a name nobody holds gets options no credential
   * answers. Without one, the authenticator offers its discoverable credentials for this site.
   */
  async options(door: Role, input: { username?: string | undefined }, client: ClientInfo) {
    const { store, accounts, relyingParty } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    let accountId: string | undefined;
    let allowed: PasskeyItem[] = [];
    if (input.username !== undefined) {
      const claim = await accounts.claimOf(input.username);
      accountId = claim?.account_id ?? NOBODY;
      if (claim) allowed = await store.list(claim.account_id);
    }
    const options = await requestOptions(relyingParty.id, allowed, 'required');
    await store.issueChallenge(options.challenge, {
      purpose: 'login',
      door,
      ...(accountId ? { account_id: accountId } : {}),
    });
    return options;
  }

  /** POST /auth/passkeys/login/verify `{response}`: a session (a passkey is both factors). */
  async verify(door: Role, input: { response: AssertionAnswer }, client: ClientInfo) {
    const { store, accounts, events } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const challenge = signedChallengeOf(input.response);
    if (!challenge) throw passkeyRefusal();
    // The challenge is taken and the credential's owner looked up together (the look-up only reads).
    const [taken, owner] = await Promise.all([
      store.takeChallenge(challenge, 'login').catch(conditionFailedAs(passkeyRefusal)),
      store.ownerOf(input.response.id),
    ]);
    if (taken.door !== door) throw passkeyRefusal();
    if (!owner || (taken.account_id !== undefined && taken.account_id !== owner)) throw passkeyRefusal();
    // The account and its passkey, both by key, together.
    const [account, passkey] = await Promise.all([accounts.get(owner), store.get(owner, input.response.id)]);
    if (!account) throw passkeyRefusal();
    // No password guard here (docs/ACCOUNTS.md "Passkeys"): an assertion is a signature nobody guesses, so
    // a refused one is not a guess, and failed passwords never hold a passkey login.
    const accepted =
      passkey && account.role === door && (await this.check(passkey, input.response, challenge, true));
    if (!accepted) {
      await events.record(account.id, 'login_failed', client);
      throw passkeyRefusal();
    }
    // Only a caller who holds the passkey learns that the account is disabled.
    if (account.status !== 'active') throw errors.forbidden('account disabled');
    // Like a device token's login, it leaves the password guard as it is: whoever is guessing stays held.
    return loginAnswer(this.deps, account, client, { method: 'passkey' });
  }

  /**
   * POST /auth/passkeys/challenge/options `{challenge_token}`: request options for the account's passkeys,
   * answering a login challenge (after the right password) instead of a TOTP code.
   */
  async challengeOptions(input: { challenge_token: string }, client: ClientInfo) {
    const { table, store, relyingParty } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const claims = await this.challengeClaims(input.challenge_token);
    const [loginChallenge, allowed] = await Promise.all([
      table.get(challengeKey(claims.jti)),
      store.list(claims.sub),
    ]);
    if (!loginChallenge || allowed.length === 0) throw passkeyRefusal();
    const options = await requestOptions(relyingParty.id, allowed, 'preferred');
    await store.issueChallenge(options.challenge, {
      purpose: 'second_factor',
      account_id: claims.sub,
      login_challenge: claims.jti,
    });
    return options;
  }

  /** POST /auth/passkeys/challenge/verify `{challenge_token, response}`: a session, once per challenge. */
  async challengeVerify(input: { challenge_token: string; response: AssertionAnswer }, client: ClientInfo) {
    const { table, store, accounts, events } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    const claims = await this.challengeClaims(input.challenge_token);
    const challenge = signedChallengeOf(input.response);
    if (!challenge) throw passkeyRefusal();
    const taken = await store
      .takeChallenge(challenge, 'second_factor')
      .catch(conditionFailedAs(passkeyRefusal));
    if (taken.login_challenge !== claims.jti || taken.account_id !== claims.sub) throw passkeyRefusal();
    const [account, passkey] = await Promise.all([
      accounts.get(claims.sub),
      store.get(claims.sub, input.response.id),
    ]);
    if (!account || !stillValid(account, claims.sep as number | undefined)) throw passkeyRefusal();
    if (!passkey || !(await this.check(passkey, input.response, challenge, false))) {
      await events.record(account.id, 'login_failed', client);
      throw passkeyRefusal();
    }
    // The login challenge ends here: one session per challenge, whichever way it is answered.
    const login = await table
      .take<{ device?: string }>(challengeKey(claims.jti), {
        ConditionExpression: 'attribute_exists(pk) AND account_id = :sub AND #expires > :now',
        ExpressionAttributeNames: { '#expires': 'expires_at' },
        ExpressionAttributeValues: { ':sub': claims.sub, ':now': epochSeconds(table.clock()) },
      })
      .catch(conditionFailedAs(passkeyRefusal));
    return loginAnswer(this.deps, account, client, { replaces: login.device, method: 'passkey' });
  }

  private async challengeClaims(token: string) {
    try {
      return await this.deps.signer.verify(token, 'totp_challenge', this.deps.table.clock());
    } catch (error) {
      if (error instanceof TokenError) throw passkeyRefusal();
      throw error;
    }
  }

  /**
   * The assertion verifies against the stored public key for this challenge, origin and RP ID, and its
   * counter is recorded (conditionally: a counter that did not grow, or a second use of one assertion,
   * fails).
   */
  private async check(
    passkey: PasskeyItem,
    response: AssertionAnswer,
    challenge: string,
    requireUserVerification: boolean,
  ): Promise<boolean> {
    const { relyingParty, store } = this.deps;
    const webauthn = await loadWebauthn();
    const verified = await webauthn
      .verifyAuthenticationResponse({
        response: { ...response, clientExtensionResults: {} },
        expectedChallenge: challenge,
        expectedOrigin: relyingParty.origins,
        expectedRPID: relyingParty.id,
        requireUserVerification,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
          counter: passkey.counter,
          ...(passkey.transports ? { transports: passkey.transports } : {}),
        },
      })
      .catch(() => undefined);
    if (!verified?.verified) return false;
    const accountId = passkey.pk.slice('account#'.length);
    return store
      .recordUse(accountId, passkey.credential_id, verified.authenticationInfo.newCounter)
      .then(() => true, conditionFailedReturns(false));
  }
}

/** A login challenge's account may still sign in: active, TOTP on, no session-ending change since. */
function stillValid(account: Account, epoch: number | undefined): boolean {
  return account.status === 'active' && account.totp_enabled && account.session_epoch === epoch;
}

/** WebAuthn request options allowing these passkeys (none: the authenticator's discoverable ones). */
async function requestOptions(
  rpID: string,
  allowed: PasskeyItem[],
  userVerification: 'required' | 'preferred',
) {
  const webauthn = await loadWebauthn();
  return webauthn.generateAuthenticationOptions({
    rpID,
    timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
    userVerification,
    allowCredentials: allowed.map((passkey) => ({
      id: passkey.credential_id,
      ...(passkey.transports ? { transports: passkey.transports } : {}),
    })),
  });
}
