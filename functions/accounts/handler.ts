// Lambda entry of the `accounts` group: every account endpoint of docs/SPEC.md 4.1 and docs/DESIGN.md 10, served at the
// listed paths and under /api/v1 (docs/DESIGN.md 4), plus the back office's account endpoints. Thin: validate,
// call one account service, shape the envelope.
import type { Accounts } from '#lib/accounts/build.ts';
import { clientOf } from '#lib/accounts/client.ts';
import { publicAccount } from '#lib/accounts/repository.ts';
import { securityState } from '#lib/accounts/second-factor.ts';
import { errors } from '#lib/core/errors.ts';
import { created, ok } from '#lib/http/envelope.ts';
import type { FrontDoorOptions } from '#lib/http/front-door.ts';
import { type AnyRoute, createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { responses } from '#lib/http/schemas/account-views.ts';
import { queries, schemas } from '#lib/http/schemas/accounts.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { log } from '#lib/platform/log.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type AccountsDeps, accountsDeps } from './deps.ts';
import { needs } from './needs.ts';

/** A 302 the browser follows (never cached: each start is a new state). */
const redirect = (location: string) =>
  ({ kind: 'raw', status: 302, body: '', headers: { location, 'cache-control': 'no-store' } }) as const;

function accountOf(request: HttpRequest<unknown, unknown>) {
  const { account } = requirePrincipal(request);
  if (!account) throw errors.unauthorized();
  return account;
}

/** The caller's session id (jti): marks `current` in the session list, spared by revoke-others. */
const sessionIdOf = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).credentialId;

/**
 * A login route at both doors (docs/ACCOUNTS.md): `/auth/<path>` for users and `/admin/auth/<path>` for
 * administrators, with the same body and answers; the door decides which accounts may pass.
 */
function atBothDoors<Path extends string>(path: Path, route: (door: 'user' | 'admin') => AnyRoute) {
  return { [`POST /auth/${path}`]: route('user'), [`POST /admin/auth/${path}`]: route('admin') } as Record<
    `POST /auth/${Path}` | `POST /admin/auth/${Path}`,
    AnyRoute
  >;
}

export function accountsRoutes(accounts: () => Accounts) {
  const accountRoutes = {
    'POST /auth/register/code': defineRoute({
      summary: 'Mail a registration code to an address',
      body: schemas.emailOnly,
      response: responses.codeSent,
      run: async (req) => ok(await accounts().registration.sendCode(req.body, clientOf(req))),
    }),
    'POST /auth/register': defineRoute({
      summary: 'Create an account with the mailed code',
      body: schemas.register,
      response: responses.user,
      successStatus: 201,
      run: async (req) => created(await accounts().registration.register(req.body, clientOf(req))),
    }),
    ...atBothDoors('login', (door) =>
      defineRoute({
        summary:
          door === 'user'
            ? 'Log in (username or e-mail): a session, or a TOTP challenge'
            : "Administrators' login: a session, or a TOTP challenge",
        // 401 bad credentials; 403 `account disabled`, only once the password is right.
        errors: [401, 403],
        body: schemas.login,
        response: responses.sessionOrChallenge,
        run: async (req) => ok(await accounts().login.login(door, req.body, clientOf(req))),
      }),
    ),
    'POST /auth/totp/verify': defineRoute({
      summary: 'Answer a login challenge with a TOTP code or a recovery code',
      // 401: a bad, used or expired challenge or code.
      errors: [401],
      body: schemas.totpVerify,
      response: responses.loginSession,
      run: async (req) => ok(await accounts().challenges.verify(req.body, clientOf(req))),
    }),
    'GET /auth/me': defineRoute({
      summary: "The caller's account",
      response: responses.user,
      run: async (req) => ok(publicAccount(accountOf(req))),
    }),
    'GET /auth/security': defineRoute({
      summary: 'Second factor and e-mail state, recovery codes left',
      response: responses.security,
      run: async (req) => ok(securityState(accountOf(req))),
    }),
    'GET /auth/security/events': defineRoute({
      summary: "Security events of the caller's account, newest first",
      query: queries.page,
      response: responses.securityEvents,
      run: async (req) => ok(await accounts().securityEvents.page(accountOf(req).id, req.query)),
    }),
    'POST /auth/totp/setup': defineRoute({
      summary: 'Start TOTP setup (needs the password): secret, otpauth link, QR code',
      body: schemas.passwordOnly,
      response: responses.totpSetup,
      run: async (req) => ok(await accounts().totp.setup(accountOf(req), req.body)),
    }),
    'POST /auth/totp/enable': defineRoute({
      summary: 'Turn TOTP on with a code; shows the recovery codes once',
      body: schemas.codeOnly,
      response: responses.totpEnabled,
      run: async (req) => ok(await accounts().totp.enable(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/totp/disable': defineRoute({
      summary: 'Turn TOTP off with a code or the password',
      body: schemas.totpDisable,
      response: responses.security,
      run: async (req) => ok(await accounts().totp.disable(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/totp/recovery-codes': defineRoute({
      summary: 'Replace the recovery codes (needs the password); shows them once',
      body: schemas.passwordOnly,
      response: responses.recoveryCodes,
      run: async (req) =>
        ok(await accounts().totp.regenerateRecoveryCodes(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/email/code': defineRoute({
      summary: 'Mail a code to the address being bound',
      body: schemas.emailOnly,
      response: responses.codeSent,
      run: async (req) => ok(await accounts().email.sendCode(accountOf(req), req.body)),
    }),
    'POST /auth/email/verify': defineRoute({
      summary: 'Bind and verify an address (needs the code and the password)',
      body: schemas.emailVerify,
      response: responses.user,
      run: async (req) => ok(await accounts().email.verify(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/email/unbind': defineRoute({
      summary: 'Remove the bound address (needs the password)',
      body: schemas.passwordOnly,
      response: responses.user,
      run: async (req) => ok(await accounts().email.unbind(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/password': defineRoute({
      summary: 'Change the password; other sessions end, API tokens stay',
      body: schemas.passwordChange,
      response: responses.session,
      run: async (req) => ok(await accounts().passwords.change(accountOf(req), req.body, clientOf(req))),
    }),
    'POST /auth/password/reset/code': defineRoute({
      summary: 'Mail a password reset code (same answer for unknown addresses)',
      body: schemas.emailOnly,
      response: responses.codeSent,
      run: async (req) => ok(await accounts().passwords.sendResetCode(req.body, clientOf(req))),
    }),
    'POST /auth/password/reset': defineRoute({
      summary:
        'Reset the password (every session, device token, API token and passkey ends): a session, or a TOTP challenge',
      body: schemas.passwordReset,
      response: responses.sessionOrChallenge,
      run: async (req) => ok(await accounts().passwords.reset(req.body, clientOf(req))),
    }),
    'POST /auth/logout': defineRoute({
      summary: 'End the current session',
      body: schemas.empty,
      response: responses.nothing,
      run: async (req) => ok(await accounts().sessions.logout(accountOf(req), sessionIdOf(req))),
    }),
    'GET /auth/sessions': defineRoute({
      summary: "The caller's live sessions",
      response: responses.sessions,
      run: async (req) => ok(await accounts().sessions.list(accountOf(req), sessionIdOf(req))),
    }),
    'DELETE /auth/sessions/{id}': defineRoute({
      summary: "End one of the caller's sessions",
      response: responses.sessionRevoked,
      run: async (req) =>
        ok(await accounts().sessions.revoke(accountOf(req), req.params.id ?? '', clientOf(req))),
    }),
    'POST /auth/passkeys/register/options': defineRoute({
      summary: 'Start adding a passkey (needs the password): WebAuthn creation options',
      body: schemas.passwordOnly,
      response: responses.webauthnOptions,
      run: async (req) => ok(await accounts().passkeys.registerOptions(accountOf(req), req.body)),
    }),
    'POST /auth/passkeys/register/verify': defineRoute({
      summary: "Add the passkey from the authenticator's answer",
      body: schemas.passkeyRegister,
      response: responses.passkey,
      successStatus: 201,
      run: async (req) =>
        created(await accounts().passkeys.registerVerify(accountOf(req), req.body, clientOf(req))),
    }),
    'GET /auth/passkeys': defineRoute({
      summary: "The caller's passkeys",
      response: responses.passkeys,
      run: async (req) => ok(await accounts().passkeys.list(accountOf(req))),
    }),
    'DELETE /auth/passkeys/{id}': defineRoute({
      summary: 'Remove a passkey (needs the password)',
      errors: [404],
      body: schemas.passwordOnly,
      response: responses.passkeyRemoved,
      run: async (req) =>
        ok(await accounts().passkeys.remove(accountOf(req), req.params.id ?? '', req.body, clientOf(req))),
    }),
    ...atBothDoors('passkeys/login/options', (door) =>
      defineRoute({
        summary:
          door === 'user'
            ? 'Start a passwordless login: WebAuthn request options (by username, or discoverable)'
            : "Start an administrators' passwordless login: WebAuthn request options",
        body: schemas.passkeyLoginOptions,
        response: responses.webauthnOptions,
        run: async (req) => ok(await accounts().passkeyLogin.options(door, req.body, clientOf(req))),
      }),
    ),
    ...atBothDoors('passkeys/login/verify', (door) =>
      defineRoute({
        summary:
          door === 'user'
            ? 'Log in with a passkey: a session (no TOTP challenge follows)'
            : "Administrators' login with a passkey",
        // 401: any refused passkey, one message; 403 `account disabled`, only once the passkey is right.
        errors: [401, 403],
        body: schemas.passkeyLogin,
        response: responses.loginSession,
        run: async (req) => ok(await accounts().passkeyLogin.verify(door, req.body, clientOf(req))),
      }),
    ),
    'POST /auth/passkeys/challenge/options': defineRoute({
      summary: 'Answer a login challenge with a passkey: WebAuthn request options',
      errors: [401],
      body: schemas.passkeyChallengeOptions,
      response: responses.webauthnOptions,
      run: async (req) => ok(await accounts().passkeyLogin.challengeOptions(req.body, clientOf(req))),
    }),
    'POST /auth/passkeys/challenge/verify': defineRoute({
      summary: 'Answer a login challenge with a passkey: a session',
      errors: [401],
      body: schemas.passkeyChallenge,
      response: responses.loginSession,
      run: async (req) => ok(await accounts().passkeyLogin.challengeVerify(req.body, clientOf(req))),
    }),
    'GET /auth/providers': defineRoute({
      summary: 'The sign-in providers the login form offers (`?door=admin`: those of the administrators)',
      query: queries.door,
      response: responses.providers,
      run: async (req) => ok(accounts().providerSignIn.providers(req.query.door)),
    }),
    'GET /auth/oauth/{provider}/start': defineRoute({
      summary: "A 302 to the provider's sign-in (PKCE S256, single-use state and nonce for 10 minutes)",
      query: queries.door,
      successStatus: 302,
      responseDescription: "A redirect to the provider's authorization endpoint.",
      errors: [403, 404, 429],
      run: async (req) =>
        redirect(
          await accounts().providerSignIn.start(req.params.provider ?? '', req.query.door, clientOf(req)),
        ),
    }),
    'GET /auth/oauth/{provider}/callback': defineRoute({
      summary:
        "The provider's answer: a 302 to the console, `/#/oauth?ticket=` (single-use, 5 minutes), `?linked=` or `?error=` (nothing created)",
      query: queries.oauthCallback,
      successStatus: 302,
      responseDescription: 'A redirect to the console.',
      errors: [404],
      run: async (req) =>
        redirect(
          await accounts().providerSignIn.callback(
            req.params.provider ?? '',
            req.query,
            req.rawQuery,
            clientOf(req),
          ),
        ),
    }),
    'POST /auth/oauth/ticket': defineRoute({
      summary:
        "Exchange the callback's ticket: a session or a TOTP challenge, or (a new identity) the username form's ticket",
      errors: [401, 403],
      body: schemas.oauthTicket,
      response: responses.oauthAnswer,
      run: async (req) => ok(await accounts().providerSignIn.exchange(req.body, clientOf(req))),
    }),
    'POST /auth/oauth/signup': defineRoute({
      summary: 'Create the account of a new provider identity with the username chosen: a session',
      errors: [401, 409],
      body: schemas.oauthSignup,
      response: responses.oauthAnswer,
      successStatus: 201,
      run: async (req) => created(await accounts().providerSignIn.signup(req.body, clientOf(req))),
    }),
    'GET /auth/identities': defineRoute({
      summary: "The sign-in providers linked to the caller's account",
      response: responses.identities,
      run: async (req) => ok(await accounts().providerSignIn.list(accountOf(req))),
    }),
    'POST /auth/identities/{provider}': defineRoute({
      summary: "Start linking a provider (needs current_password): the provider's sign-in URL to open",
      // 403: an administrator, with a provider whose admin_door is off.
      errors: [403, 404],
      body: schemas.currentPassword,
      response: responses.linkStarted,
      run: async (req) =>
        ok(await accounts().providerSignIn.startLink(accountOf(req), req.params.provider ?? '', req.body)),
    }),
    'DELETE /auth/identities/{provider}': defineRoute({
      summary: 'Unlink a provider (409 when it is the last way to sign in)',
      errors: [404, 409],
      response: responses.identityUnlinked,
      run: async (req) =>
        ok(await accounts().providerSignIn.unlink(accountOf(req), req.params.provider ?? '', clientOf(req))),
    }),
    'POST /auth/sessions/revoke-others': defineRoute({
      summary: 'End every session but the current one',
      body: schemas.empty,
      response: responses.othersRevoked,
      run: async (req) =>
        ok(await accounts().sessions.revokeOthers(accountOf(req), sessionIdOf(req), clientOf(req))),
    }),
  };
  return {
    ...accountRoutes,
    'POST /api/v1/admin/accounts': defineRoute({
      summary: "Create an administrator (needs the acting administrator's password)",
      body: schemas.adminCreate,
      response: responses.user,
      successStatus: 201,
      run: async (req) => created(await accounts().admin.createAdministrator(accountOf(req), req.body)),
    }),
    'GET /api/v1/admin/accounts': defineRoute({
      summary: 'Search accounts by username or e-mail prefix',
      query: queries.accountSearch,
      response: responses.adminAccounts,
      run: async (req) => ok(await accounts().admin.list(req.query)),
    }),
    'PATCH /api/v1/admin/accounts/{id}': defineRoute({
      summary: 'Enable or disable an account (an administrator: needs current_password; never the last one)',
      errors: [409],
      body: schemas.adminStatus,
      response: responses.adminAccount,
      run: async (req) => ok(await accounts().admin.setStatus(accountOf(req), req.params.id ?? '', req.body)),
    }),
    'POST /api/v1/admin/accounts/{id}/totp/reset': defineRoute({
      summary:
        "Turn an account's TOTP off and end its sessions (another administrator's: needs current_password)",
      body: schemas.adminTotpReset,
      response: responses.adminAccount,
      run: async (req) =>
        ok(await accounts().admin.resetTotp(accountOf(req), req.params.id ?? '', req.body, clientOf(req))),
    }),
  };
}

/** The accounts group over the given dependencies (tests build theirs with their own clock and mailer). */
export function createAccountsHandler(deps: () => AccountsDeps, options: FrontDoorOptions = {}) {
  return createGroupHandler(
    'accounts',
    accountsRoutes(() => deps().accounts),
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      audit: () => deps().audit,
      // Only through the CDN, which also names the viewer's address the per-IP limit counts.
      frontDoor: options.frontDoor,
      // Once per container, before the first request (race-safe across containers).
      warmUp: async () => {
        await Promise.all([
          deps().accounts.registration.bootstrapAdministrator(deps().bootstrap),
          // Logins that name nobody verify against it (lib/accounts/decoy.ts); without it they fall back
          // to an in-memory dummy hash, so a failure here is logged, not fatal.
          deps()
            .accounts.decoy.ensure()
            .catch((error: unknown) =>
              log.warn('decoy account not created', { error_name: (error as Error)?.name }),
            ),
        ]);
      },
    },
  );
}

export const handler = createAccountsHandler(accountsDeps, {
  frontDoor: groupFrontDoor('accounts', needs, config),
});
