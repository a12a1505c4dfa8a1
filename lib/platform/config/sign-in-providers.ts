// `auth.providers`: the sign-in providers (docs/ACCOUNTS.md "Sign in with another provider"), an OIDC issuer
// found by discovery or GitHub, each with its client secret in Secrets Manager (or, outside production, inline).
import * as z from '#lib/platform/zod.ts';

const optionalText = z.optional(z.string().check(z.trim(), z.minLength(1)));
const url = z.url({ protocol: /^https?$/ });

const signInProvider = z
  .object({
    id: z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'must be a short url-safe name')),
    kind: z.enum(['oidc', 'github']),
    label: z.string().check(z.trim(), z.minLength(1), z.maxLength(64)),
    // oidc: the issuer, found by discovery (/.well-known/openid-configuration).
    issuer: z.optional(url),
    client_id: z.string().check(z.minLength(1)),
    // The client secret: a Secrets Manager secret (its name or ARN; the accounts function may read it), or,
    // outside production only, the value itself.
    secret_id: optionalText,
    client_secret: optionalText,
    scopes: z.optional(z.array(z.string().check(z.regex(/^[\x21-\x7e]{1,64}$/)))),
    // Whether administrators may sign in by it (at /admin/login).
    admin_door: z._default(z.boolean(), false),
    // github: where its OAuth endpoints and API are (tests point them at a stand-in).
    github_url: z._default(url, 'https://github.com'),
    github_api_url: z._default(url, 'https://api.github.com'),
  })
  .check(
    z.refine((p) => p.kind !== 'oidc' || p.issuer !== undefined, 'issuer: is required for an oidc provider'),
    z.refine(
      (p) => (p.secret_id === undefined) !== (p.client_secret === undefined),
      'name exactly one of secret_id and client_secret',
    ),
  );
export type SignInProviderSettings = z.infer<typeof signInProvider>;

export const signInProviders = z._default(
  z
    .array(signInProvider)
    .check(
      z.refine(
        (list) => new Set(list.map((p) => p.id)).size === list.length,
        'each provider needs its own id',
      ),
    ),
  [],
);
