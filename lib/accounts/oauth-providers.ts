// The sign-in providers' side of the flow (docs/ACCOUNTS.md "Sign in with another provider"): openid-client
// builds the authorization URL (PKCE S256, state, nonce) and checks the answer: the code exchange and, for
// an OIDC issuer, the ID token (issuer, audience, nonce, expiry, signature by the issuer's JWKS); for
// GitHub, its user and e-mail APIs. Every refusal is a 401 naming what was wrong.
import { errors } from '#lib/core/errors.ts';
import type { SignInProviderSettings } from '#lib/platform/config/schema.ts';

type OpenIdClient = typeof import('openid-client');
type Configuration = import('openid-client').Configuration;

/** Who the provider says signed in: its stable subject, and the e-mail it vouches for (if any). */
export interface ProviderIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export interface OAuthChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface OAuthProvidersDeps {
  providers: readonly SignInProviderSettings[];
  /** The provider's client secret (Secrets Manager in AWS, the setting itself locally). */
  secretOf: (provider: SignInProviderSettings) => Promise<string>;
  /** `base_url`: the redirect URI is `<base_url>/api/v1/auth/oauth/<id>/callback`. */
  baseUrl: string;
}

export const providerRefusal = (message: string) => errors.unauthorized(message);

/** openid-client, loaded on the first sign-in rather than at cold start. */
let library: Promise<OpenIdClient> | undefined;
const load = () => {
  library ??= import('openid-client');
  return library;
};

export class OAuthProviders {
  /** One configuration per provider (an OIDC issuer's discovery), kept while it works. */
  private readonly configs = new Map<string, Promise<Configuration>>();

  constructor(private readonly deps: OAuthProvidersDeps) {}

  /** The public list the login form shows. */
  list(door: 'user' | 'admin' = 'user') {
    return this.deps.providers
      .filter((provider) => door === 'user' || provider.admin_door)
      .map(({ id, label }) => ({ id, label }));
  }

  /** The configured provider, or 404. */
  get(id: string): SignInProviderSettings {
    const provider = this.deps.providers.find((candidate) => candidate.id === id);
    if (!provider) throw errors.notFound(`provider: no sign-in provider is named ${JSON.stringify(id)}`);
    return provider;
  }

  redirectUri(provider: SignInProviderSettings): string {
    return `${this.deps.baseUrl}/api/v1/auth/oauth/${provider.id}/callback`;
  }

  /** Where the browser goes to sign in at the provider. */
  async authorizationUrl(provider: SignInProviderSettings, checks: OAuthChecks): Promise<string> {
    const [client, config] = await Promise.all([load(), this.config(provider)]);
    const oidc = provider.kind === 'oidc';
    const scopes = provider.scopes ?? (oidc ? ['openid', 'email', 'profile'] : ['read:user', 'user:email']);
    return client
      .buildAuthorizationUrl(config, {
        redirect_uri: this.redirectUri(provider),
        scope: scopes.join(' '),
        state: checks.state,
        code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
        ...(oidc ? { nonce: checks.nonce } : {}),
      })
      .toString();
  }

  /** The provider's answer at the callback (its query), checked: who signed in. */
  async identity(
    provider: SignInProviderSettings,
    query: string,
    checks: OAuthChecks,
  ): Promise<ProviderIdentity> {
    const [client, config] = await Promise.all([load(), this.config(provider)]);
    const current = new URL(`${this.redirectUri(provider)}?${query}`);
    const oidc = provider.kind === 'oidc';
    let tokens: Awaited<ReturnType<OpenIdClient['authorizationCodeGrant']>>;
    try {
      tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        ...(oidc ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
      });
    } catch (error) {
      throw refusalOf(client, error);
    }
    if (oidc) {
      const claims = tokens.claims()!;
      const email = typeof claims.email === 'string' ? claims.email : null;
      return { subject: claims.sub, email, emailVerified: email !== null && claims.email_verified === true };
    }
    return this.githubIdentity(provider, tokens.access_token);
  }

  /** GitHub's user (its numeric id) and its primary e-mail, verified or not. */
  private async githubIdentity(provider: SignInProviderSettings, token: string): Promise<ProviderIdentity> {
    const read = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${provider.github_api_url}${path}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' },
      });
      if (!response.ok) throw providerRefusal(`GitHub refused its ${path} API (${response.status})`);
      return (await response.json()) as T;
    };
    const [user, emails] = await Promise.all([
      read<{ id?: number }>('/user'),
      read<Array<{ email: string; primary: boolean; verified: boolean }>>('/user/emails'),
    ]);
    if (typeof user.id !== 'number') throw providerRefusal('GitHub named no user');
    const primary = Array.isArray(emails) ? emails.find((entry) => entry.primary) : undefined;
    return {
      subject: String(user.id),
      email: primary?.email ?? null,
      emailVerified: primary?.verified === true,
    };
  }

  private config(provider: SignInProviderSettings): Promise<Configuration> {
    let config = this.configs.get(provider.id);
    if (!config) {
      config = this.build(provider);
      this.configs.set(provider.id, config);
      // A failed discovery (the issuer down) is tried again by the next sign-in.
      config.catch(() => this.configs.delete(provider.id));
    }
    return config;
  }

  private async build(provider: SignInProviderSettings): Promise<Configuration> {
    const [client, secret] = await Promise.all([load(), this.deps.secretOf(provider)]);
    const insecure = (provider.issuer ?? provider.github_url).startsWith('http://');
    // Plain http only where the settings name such an issuer (a test's, on 127.0.0.1); production's
    // guards allow https issuers only (infra/stage-config.ts).
    // ID tokens' signatures are checked against the issuer's JWKS as well (not only TLS to its endpoint).
    const execute = [client.enableNonRepudiationChecks, ...(insecure ? [client.allowInsecureRequests] : [])];
    if (provider.kind === 'oidc')
      return client.discovery(new URL(provider.issuer!), provider.client_id, secret, undefined, { execute });
    const config = new client.Configuration(
      {
        issuer: provider.github_url,
        authorization_endpoint: `${provider.github_url}/login/oauth/authorize`,
        token_endpoint: `${provider.github_url}/login/oauth/access_token`,
      },
      provider.client_id,
      secret,
    );
    if (insecure) client.allowInsecureRequests(config);
    return config;
  }
}

/** What the provider or its answer got wrong, in words the console shows. */
function refusalOf(client: OpenIdClient, error: unknown): Error {
  if (error instanceof client.AuthorizationResponseError)
    return providerRefusal(`The provider refused the sign-in: ${error.error}`);
  if (error instanceof client.ResponseBodyError)
    return providerRefusal(`The provider refused the code: ${error.error}`);
  if (error instanceof client.ClientError || error instanceof TypeError) {
    // openid-client's own words name the check that failed (the claim: aud, exp, nonce; the signature).
    const detail = error.cause instanceof Error ? error.cause.message : error.message;
    return providerRefusal(`The provider's answer was not accepted: ${detail}`);
  }
  return error as Error;
}
