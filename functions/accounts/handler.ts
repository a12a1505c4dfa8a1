// Lambda entry of the `accounts` group: every account endpoint of docs/SPEC.md 4.1 and docs/DESIGN.md 10, served at the
// listed paths and under /api/v1 (docs/DESIGN.md 4), plus the back office's account endpoints. Thin: validate,
// call one account service, shape the envelope.
import type { Accounts } from '#lib/accounts/build.ts';
import { clientOf } from '#lib/accounts/client.ts';
import { publicAccount } from '#lib/accounts/repository.ts';
import { securityState } from '#lib/accounts/second-factor.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { type AnyRoute, createGroupHandler, defineRoute, type EntryOptions } from '#lib/http/handler.ts';
import { requireAccount, requirePrincipal } from '#lib/http/principal.ts';
import { responses } from '#lib/http/schemas/account-views.ts';
import { queries, schemas } from '#lib/http/schemas/accounts.ts';
import { challengeView } from '#lib/http/schemas/common.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { log } from '#lib/platform/log.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { banRoutes } from './ban-routes.ts';
import { type AccountsDeps, accountsDeps } from './deps.ts';
import { needs } from './needs.ts';
import { providerRoutes } from './provider-routes.ts';
import { siteRoutes } from './site-routes.ts';

const accountOf = requireAccount;

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
      body: schemas.emailWithChallenge,
      response: responses.codeSent,
      run: async (req) => {
        await accounts().proofOfWork.check(req.body.altcha, req.sourceIp);
        return ok(await accounts().registration.sendCode(req.body, clientOf(req)));
      },
    }),
    'POST /auth/register': defineRoute({
      summary: 'Create an account with the mailed code',
      body: schemas.register,
      response: responses.user,
      successStatus: 201,
      run: async (req) => {
        await accounts().proofOfWork.check(req.body.altcha, req.sourceIp);
        return created(await accounts().registration.register(req.body, clientOf(req)));
      },
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
      body: schemas.emailWithChallenge,
      response: responses.codeSent,
      run: async (req) => {
        await accounts().proofOfWork.check(req.body.altcha, req.sourceIp);
        return ok(await accounts().passwords.sendResetCode(req.body, clientOf(req)));
      },
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
    ...providerRoutes(accounts),
    'GET /api/v1/challenge': defineRoute({
      summary:
        'A proof-of-work challenge (ALTCHA) for registration, reset codes, share passwords and reports: its solution is their `altcha` field (docs/ACCOUNTS.md "Proof of work")',
      response: challengeView,
      run: async () => ok(await accounts().proofOfWork.challenge()),
    }),
    'POST /api/v1/account/delete': defineRoute({
      summary:
        'Delete the account after a 7-day grace that any login cancels (needs current_password, and `code` when TOTP is on; not for administrators)',
      body: schemas.accountDelete,
      response: responses.deletionScheduled,
      successStatus: 202,
      run: async (req) =>
        ok(await accounts().deletion.schedule(accountOf(req), req.body, clientOf(req)), 202),
    }),
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
export function createAccountsHandler(deps: () => AccountsDeps, options: EntryOptions = {}) {
  return createGroupHandler(
    'accounts',
    {
      ...accountsRoutes(() => deps().accounts),
      ...banRoutes(() => deps().bans.bans),
      ...siteRoutes(() => deps().site),
    },
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      audit: () => deps().audit,
      // Only through the CDN, which also names the viewer's address the per-IP limit counts.
      frontDoor: options.frontDoor,
      // The routes' own copy of the bans (a change here is enforced here at once), unless one is given.
      bans: options.bans ?? ((address) => deps().bans.cache.check(address)),
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
