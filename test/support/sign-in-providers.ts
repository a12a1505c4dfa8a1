// Sign-in providers on 127.0.0.1 for the tests (docs/ACCOUNTS.md "Sign in with another provider"): a real
// OIDC issuer (oidc-provider, its dev login page: any login, the login is the subject), a stand-in issuer
// whose ID tokens a test spoils on purpose (another audience, expired, a foreign key), and a fake GitHub.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export const CLIENT = { id: 'service-test', secret: 'a-test-client-secret' };
export const callbackOf = (baseUrl: string, provider: string) =>
  `${baseUrl}/api/v1/auth/oauth/${provider}/callback`;

/** The people the issuer knows: subject -> e-mail and whether it is verified. */
export type People = Map<string, { email: string; email_verified: boolean }>;

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** oidc-provider with one client whose redirect URIs are given; people sign in on its dev login page. */
export async function startOidcIssuer(redirectUris: string[], people: People) {
  let provider: Provider | undefined;
  const listening = await listen((req, res) => provider!.callback()(req, res));
  provider = new Provider(listening.url, {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        redirect_uris: redirectUris,
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The e-mail in the ID token itself, as Google and Keycloak put it.
    conformIdTokenClaims: false,
    cookies: { keys: ['test-cookie-key'] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, ...people.get(sub) }),
    }),
    // Consent is given: only the login page shows.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  return { issuer: listening.url, close: listening.close };
}

/**
 * Follows the provider's sign-in from the authorization URL as a browser would (cookies kept), logs in as
 * `login` on the dev login page, and answers where the provider sends the browser back (the callback URL).
 */
export async function signInAt(authorizationUrl: string, login: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  let init: RequestInit = {};
  for (let hop = 0; hop < 10; hop++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = response.headers.get('location');
    init = {};
    if (location) {
      url = new URL(location, url).toString();
      if (!url.startsWith(new URL(authorizationUrl).origin)) return url;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(page)?.[1];
    if (!action) throw new Error(`no form at ${url}: ${response.status} ${page.slice(0, 300)}`);
    url = new URL(action, url).toString();
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
    };
  }
  throw new Error('the sign-in never came back');
}

/** Where the browser comes back from an authorization URL at a stand-in (one redirect, no page). */
export async function followAuthorization(authorizationUrl: string): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  return response.headers.get('location')!;
}

/** How the stand-in issuer spoils its next ID tokens. */
export interface Spoil {
  aud?: string;
  exp?: number;
  nonce?: string;
  /** Signed by a key the issuer's JWKS does not hold. */
  foreignKey?: boolean;
}

/** A minimal OIDC issuer (discovery, JWKS, authorize, token) whose ID tokens can be spoiled. */
export async function startStandInIssuer(subject: { sub: string; email: string; email_verified: boolean }) {
  const [key, foreign] = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256')]);
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string; client: string }>();
  const state = { spoil: {} as Spoil };
  const listening = await listen(async (req, res) => {
    const url = new URL(req.url!, base());
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return json({
        issuer: base(),
        authorization_endpoint: `${base()}/authorize`,
        token_endpoint: `${base()}/token`,
        jwks_uri: `${base()}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(16).toString('hex');
      const q = url.searchParams;
      codes.set(code, { nonce: q.get('nonce') ?? '', client: q.get('client_id') ?? '' });
      const back = new URL(q.get('redirect_uri')!);
      back.search = new URLSearchParams({ code, state: q.get('state') ?? '' }).toString();
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname === '/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const granted = codes.get(new URLSearchParams(body).get('code') ?? '');
      if (!granted) return res.writeHead(400).end(JSON.stringify({ error: 'invalid_grant' }));
      const now = Math.floor(Date.now() / 1000);
      const { spoil } = state;
      const idToken = await new SignJWT({ ...subject, nonce: spoil.nonce ?? granted.nonce })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(base())
        .setAudience(spoil.aud ?? granted.client)
        .setIssuedAt(spoil.exp ? spoil.exp - 600 : now)
        .setExpirationTime(spoil.exp ?? now + 300)
        .sign(spoil.foreignKey ? foreign.privateKey : key.privateKey);
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    res.writeHead(404).end();
  });
  const base = () => listening.url;
  return { issuer: listening.url, close: listening.close, spoil: (next: Spoil) => (state.spoil = next) };
}

/** GitHub's OAuth endpoints and its user and e-mail APIs, for one user the test may change. */
export async function startFakeGithub(user: { id: number; email: string; verified: boolean }) {
  const current = { ...user };
  let server: { server: Server; url: string; close: () => Promise<void> };
  server = await listen(async (req, res) => {
    const url = new URL(req.url!, server.url);
    const json = (body: unknown, status = 200) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/login/oauth/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.search = new URLSearchParams({
        code: 'gh-code',
        state: url.searchParams.get('state') ?? '',
      }).toString();
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname === '/login/oauth/access_token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      if (form.get('client_secret') !== CLIENT.secret || !form.get('code_verifier'))
        return json({ error: 'bad_verification_code' }, 400);
      return json({ access_token: 'gh-token', token_type: 'bearer', scope: 'read:user,user:email' });
    }
    if (req.headers.authorization !== 'Bearer gh-token') return json({ message: 'Bad credentials' }, 401);
    if (url.pathname === '/user') return json({ id: current.id, login: `octo${current.id}` });
    if (url.pathname === '/user/emails')
      return json([
        { email: `other-${current.id}@example.test`, primary: false, verified: true },
        { email: current.email, primary: true, verified: current.verified },
      ]);
    res.writeHead(404).end();
  });
  return { url: server.url, user: current, close: server.close };
}
