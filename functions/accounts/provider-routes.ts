// Sign in with another provider (docs/ACCOUNTS.md "Sign in with another provider"): the providers the login
// form offers, the start and the provider's answer (each a 302), the console's ticket exchange and username
// form, and the owner's linked identities.
import type { Accounts } from '#lib/accounts/build.ts';
import { clientOf } from '#lib/accounts/client.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requireAccount as accountOf } from '#lib/http/principal.ts';
import { responses } from '#lib/http/schemas/account-views.ts';
import { queries, schemas } from '#lib/http/schemas/accounts.ts';

/** A 302 the browser follows (never cached: each start is a new state). */
const redirect = (location: string) =>
  ({ kind: 'raw', status: 302, body: '', headers: { location, 'cache-control': 'no-store' } }) as const;

export function providerRoutes(accounts: () => Accounts) {
  return {
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
  };
}
