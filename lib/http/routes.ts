// The route table: the single source of truth for method + path -> function group, read by the CDK
// stack (API Gateway routes) and by the local server (request routing). Keep it free of imports so
// the infrastructure code can load it without pulling in any handler.

/**
 * How a route is authenticated before its implementation runs.
 * - none: public (rate limits may still apply).
 * - session: a user or administrator session.
 * - admin: an administrator session; a user session is 403.
 * - uploader: a session or an API token (docs/DESIGN.md 5).
 * - signed: the request proves itself (payment callback signature, signed cashier link).
 */
export type AuthKind = 'none' | 'session' | 'admin' | 'uploader' | 'signed';

/** How the body is read: parsed JSON, kept as raw bytes (multipart, forms, callbacks), or ignored. */
export type BodyKind = 'json' | 'raw' | 'none';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway path syntax: `{id}` for one segment, `{key+}` for the rest. */
  path: string;
  group: FunctionGroup;
  auth: AuthKind;
  body: BodyKind;
  /** The path this route repeats under another prefix (the account routes under /api/v1): documented once. */
  aliasOf?: string;
}

/** `METHOD path`, the same string API Gateway gives as `routeKey`. */
export function routeKeyOf(route: Pick<RouteSpec, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

export const API_PREFIX = '/api/v1';

/** One row: method, path, auth kind, body kind. */
type RouteRow = readonly [HttpMethod, string, AuthKind, BodyKind];

// docs/DESIGN.md 4: account endpoints answer both without a prefix (docs/SPEC.md) and under /api/v1.
const ACCOUNT_ROUTES = [
  ['POST', '/auth/register/code', 'none', 'json'],
  ['POST', '/auth/register', 'none', 'json'],
  ['POST', '/auth/login', 'none', 'json'],
  ['POST', '/admin/auth/login', 'none', 'json'],
  // The challenge token travels in the body; the route itself is public.
  ['POST', '/auth/totp/verify', 'none', 'json'],
  ['GET', '/auth/me', 'session', 'none'],
  ['GET', '/auth/security', 'session', 'none'],
  ['POST', '/auth/totp/setup', 'session', 'json'],
  ['POST', '/auth/totp/enable', 'session', 'json'],
  ['POST', '/auth/totp/disable', 'session', 'json'],
  ['POST', '/auth/email/code', 'session', 'json'],
  ['POST', '/auth/email/verify', 'session', 'json'],
  ['POST', '/auth/email/unbind', 'session', 'json'],
  ['POST', '/auth/password', 'session', 'json'],
  ['POST', '/auth/password/reset/code', 'none', 'json'],
  ['POST', '/auth/password/reset', 'none', 'json'],
  ['POST', '/auth/logout', 'session', 'json'],
  // Account security, second wave (docs/ACCOUNTS.md): recovery codes, sessions, security events.
  ['POST', '/auth/totp/recovery-codes', 'session', 'json'],
  ['GET', '/auth/sessions', 'session', 'none'],
  ['DELETE', '/auth/sessions/{id}', 'session', 'none'],
  ['POST', '/auth/sessions/revoke-others', 'session', 'json'],
  ['GET', '/auth/security/events', 'session', 'none'],
  // Passkeys (docs/DESIGN.md 18): the owner's, passwordless login at both doors, the login challenge's answer.
  ['POST', '/auth/passkeys/register/options', 'session', 'json'],
  ['POST', '/auth/passkeys/register/verify', 'session', 'json'],
  ['GET', '/auth/passkeys', 'session', 'none'],
  ['DELETE', '/auth/passkeys/{id}', 'session', 'json'],
  ['POST', '/auth/passkeys/login/options', 'none', 'json'],
  ['POST', '/auth/passkeys/login/verify', 'none', 'json'],
  ['POST', '/admin/auth/passkeys/login/options', 'none', 'json'],
  ['POST', '/admin/auth/passkeys/login/verify', 'none', 'json'],
  ['POST', '/auth/passkeys/challenge/options', 'none', 'json'],
  ['POST', '/auth/passkeys/challenge/verify', 'none', 'json'],
  // Sign-in providers (docs/ACCOUNTS.md "Sign in with another provider"): the browser's start and callback, the console's ticket, linking.
  ['GET', '/auth/providers', 'none', 'none'],
  ['GET', '/auth/oauth/{provider}/start', 'none', 'none'],
  ['GET', '/auth/oauth/{provider}/callback', 'none', 'none'],
  ['POST', '/auth/oauth/ticket', 'none', 'json'],
  ['POST', '/auth/oauth/signup', 'none', 'json'],
  ['GET', '/auth/identities', 'session', 'none'],
  ['POST', '/auth/identities/{provider}', 'session', 'json'],
  ['DELETE', '/auth/identities/{provider}', 'session', 'none'],
] as const satisfies readonly RouteRow[];

/**
 * Every route by the function group that serves it. `as const`, so each group's route keys are a type
 * (`RouteKey`) that its handler map must match: a missing or misspelt handler fails `tsc`.
 */
const GROUP_ROUTES = {
  accounts: [
    ...ACCOUNT_ROUTES,
    ['POST', `${API_PREFIX}/admin/accounts`, 'admin', 'json'],
    ['GET', `${API_PREFIX}/admin/accounts`, 'admin', 'none'],
    ['PATCH', `${API_PREFIX}/admin/accounts/{id}`, 'admin', 'json'],
    ['POST', `${API_PREFIX}/admin/accounts/{id}/totp/reset`, 'admin', 'json'],
    ['POST', `${API_PREFIX}/admin/bans`, 'admin', 'json'],
    ['GET', `${API_PREFIX}/admin/bans`, 'admin', 'none'],
    ['DELETE', `${API_PREFIX}/admin/bans/{id}`, 'admin', 'none'],
    // Proof of work's challenge (docs/ACCOUNTS.md "Proof of work").
    ['GET', `${API_PREFIX}/challenge`, 'none', 'none'],
    // Closing one's own account after a grace (docs/ACCOUNTS.md "Deleting an account").
    ['POST', `${API_PREFIX}/account/delete`, 'session', 'json'],
    // The operator's site (docs/DEPLOYMENT.md "Branding").
    ['GET', `${API_PREFIX}/site`, 'none', 'none'],
    ['PUT', `${API_PREFIX}/admin/site`, 'admin', 'json'],
  ],
  shares: [
    // Share links (docs/DESIGN.md 16): the owner's, and the viewer's without a login.
    ['POST', `${API_PREFIX}/shares`, 'session', 'json'],
    ['GET', `${API_PREFIX}/shares`, 'session', 'none'],
    ['DELETE', `${API_PREFIX}/shares/{id}`, 'session', 'none'],
    ['POST', `${API_PREFIX}/shares/{id}/open`, 'none', 'json'],
    // The share as a page without script, its password form posting to itself, and a random image.
    ['GET', '/s/{id}', 'none', 'none'],
    ['POST', '/s/{id}', 'none', 'raw'],
    ['GET', '/s/{id}/random', 'none', 'none'],
    // A share's images through its own door (docs/ALBUMS.md "What a share adds"), never a file's /i/<key>.
    ['GET', '/s/{id}/i/{grant}', 'none', 'none'],
    // Reports of a file or a share by anyone (docs/MODERATION.md "Reports").
    ['POST', `${API_PREFIX}/reports`, 'none', 'json'],
  ],
  files: [
    ['POST', `${API_PREFIX}/upload`, 'uploader', 'raw'],
    ['POST', `${API_PREFIX}/upload/presign`, 'uploader', 'json'],
    ['POST', `${API_PREFIX}/upload/confirm`, 'uploader', 'json'],
    ['GET', `${API_PREFIX}/files`, 'uploader', 'none'],
    ['GET', `${API_PREFIX}/files/{id}`, 'uploader', 'none'],
    ['PATCH', `${API_PREFIX}/files/{id}`, 'uploader', 'json'],
    ['DELETE', `${API_PREFIX}/files/{id}`, 'uploader', 'none'],
    ['PUT', `${API_PREFIX}/files/{id}/tags`, 'uploader', 'json'],
    // The trash a DELETE moves a file to (docs/UPLOADS.md "Trash"): listed, emptied, restored from.
    ['GET', `${API_PREFIX}/files/trash`, 'uploader', 'none'],
    ['DELETE', `${API_PREFIX}/files/trash`, 'uploader', 'none'],
    ['DELETE', `${API_PREFIX}/files/trash/{id}`, 'uploader', 'none'],
    ['POST', `${API_PREFIX}/files/{id}/restore`, 'uploader', 'none'],
    // A signed rendition URL for the file's owner or an administrator (docs/IMAGES.md).
    ['POST', `${API_PREFIX}/files/{id}/rendition-url`, 'uploader', 'json'],
    ['GET', `${API_PREFIX}/gallery`, 'none', 'none'],
    ['POST', `${API_PREFIX}/tokens`, 'session', 'json'],
    ['GET', `${API_PREFIX}/tokens`, 'session', 'none'],
    ['DELETE', `${API_PREFIX}/tokens/{id}`, 'session', 'none'],
    // Storage usage and quota (docs/UPLOADS.md).
    ['GET', `${API_PREFIX}/usage`, 'uploader', 'none'],
    // The owner's hotlink rules (docs/IMAGES.md "Serving rules").
    ['GET', `${API_PREFIX}/hotlink`, 'session', 'none'],
    ['PUT', `${API_PREFIX}/hotlink`, 'session', 'json'],
    // Back office: any owner's files (docs/UPLOADS.md).
    ['GET', `${API_PREFIX}/admin/files`, 'admin', 'none'],
    ['GET', `${API_PREFIX}/admin/files/find`, 'admin', 'none'],
    ['PATCH', `${API_PREFIX}/admin/files/{id}`, 'admin', 'json'],
    ['DELETE', `${API_PREFIX}/admin/files/{id}`, 'admin', 'none'],
    // Moderation (docs/MODERATION.md): a file's bytes for its owner, the queue, reviews, the block list,
    // the audit log.
    ['GET', `${API_PREFIX}/files/{id}/content`, 'uploader', 'none'],
    ['GET', `${API_PREFIX}/admin/moderation`, 'admin', 'none'],
    ['POST', `${API_PREFIX}/admin/moderation/{id}`, 'admin', 'json'],
    ['GET', `${API_PREFIX}/admin/blocklist`, 'admin', 'none'],
    ['DELETE', `${API_PREFIX}/admin/blocklist/{id}`, 'admin', 'none'],
    ['GET', `${API_PREFIX}/admin/audit`, 'admin', 'none'],
    // Albums (docs/DESIGN.md 16).
    ['POST', `${API_PREFIX}/albums`, 'uploader', 'json'],
    ['GET', `${API_PREFIX}/albums`, 'uploader', 'none'],
    ['GET', `${API_PREFIX}/albums/{id}`, 'uploader', 'none'],
    ['PATCH', `${API_PREFIX}/albums/{id}`, 'uploader', 'json'],
    ['DELETE', `${API_PREFIX}/albums/{id}`, 'uploader', 'none'],
    // The owner's export (docs/ACCOUNTS.md "Export"); its mailed link proves itself.
    ['POST', `${API_PREFIX}/account/export`, 'session', 'json'],
    ['GET', `${API_PREFIX}/account/export`, 'session', 'none'],
    ['GET', `${API_PREFIX}/account/exports/{id}/download`, 'signed', 'none'],
    // The peers' upload APIs (docs/COMPAT.md): their clients send the API token their own way and read
    // errors in their own shape, so these routes take it themselves, through the uploader check.
    ['POST', '/compat/lsky/api/v1/upload', 'none', 'raw'],
    ['DELETE', '/compat/lsky/api/v1/images/{key}', 'none', 'none'],
    ['POST', '/compat/lsky/api/v2/upload', 'none', 'raw'],
    ['POST', '/compat/chevereto/api/1/upload', 'none', 'raw'],
    // Chevereto's delete_url: a page asking first, its form posting back (lib/compat/delete-links.ts).
    ['GET', '/compat/chevereto/delete/{id}/{sig}', 'none', 'none'],
    ['POST', '/compat/chevereto/delete/{id}/{sig}', 'none', 'none'],
    // Webhooks (docs/WEBHOOKS.md).
    ['POST', `${API_PREFIX}/webhooks`, 'session', 'json'],
    ['GET', `${API_PREFIX}/webhooks`, 'session', 'none'],
    ['PATCH', `${API_PREFIX}/webhooks/{id}`, 'session', 'json'],
    ['DELETE', `${API_PREFIX}/webhooks/{id}`, 'session', 'none'],
    ['GET', `${API_PREFIX}/webhooks/{id}/deliveries`, 'session', 'none'],
  ],
  meta: [
    ['GET', '/healthz', 'none', 'none'],
    // The API document (docs/openapi.json) and a page rendering it.
    ['GET', `${API_PREFIX}/openapi.json`, 'none', 'none'],
    ['GET', '/docs', 'none', 'none'],
    // The page's script and style sheets (the reference renderer), served from this origin.
    ['GET', '/docs/assets/{name}', 'none', 'none'],
    ['GET', '/docs/guides/{name}', 'none', 'none'],
  ],
  render: [
    // Stored files and their renditions (docs/IMAGES.md): in AWS the CDN serves /i/<key> from the bucket and
    // sends only requests with a query (renditions) here; the API answers both where it is asked directly.
    ['GET', '/i/{key+}', 'none', 'none'],
  ],
  payments: [
    ['GET', `${API_PREFIX}/plans`, 'none', 'none'],
    ['GET', `${API_PREFIX}/admin/plans`, 'admin', 'none'],
    ['POST', `${API_PREFIX}/admin/plans`, 'admin', 'json'],
    ['PATCH', `${API_PREFIX}/admin/plans/{id}`, 'admin', 'json'],
    ['DELETE', `${API_PREFIX}/admin/plans/{id}`, 'admin', 'none'],
    ['GET', `${API_PREFIX}/payment-gateways`, 'none', 'none'],
    ['POST', `${API_PREFIX}/orders`, 'session', 'json'],
    ['GET', `${API_PREFIX}/orders`, 'session', 'none'],
    ['GET', `${API_PREFIX}/orders/{id}`, 'session', 'none'],
    ['POST', `${API_PREFIX}/orders/{id}/cancel`, 'session', 'json'],
    ['POST', `${API_PREFIX}/orders/{id}/pay`, 'session', 'json'],
    ['GET', `${API_PREFIX}/admin/orders`, 'admin', 'none'],
    ['POST', `${API_PREFIX}/admin/orders/{id}/pay`, 'admin', 'json'],
    // Coupons and refunds (docs/DESIGN.md 17).
    ['POST', `${API_PREFIX}/admin/orders/{id}/refund`, 'admin', 'json'],
    ['POST', `${API_PREFIX}/admin/coupons`, 'admin', 'json'],
    ['GET', `${API_PREFIX}/admin/coupons`, 'admin', 'none'],
    ['PATCH', `${API_PREFIX}/admin/coupons/{id}`, 'admin', 'json'],
    ['DELETE', `${API_PREFIX}/admin/coupons/{id}`, 'admin', 'none'],
    ['POST', `${API_PREFIX}/coupons/validate`, 'session', 'json'],
    ['GET', `${API_PREFIX}/admin/payment`, 'admin', 'none'],
    ['PUT', `${API_PREFIX}/admin/payment`, 'admin', 'json'],
    // The hosted mock cashier (docs/DESIGN.md 7): a page and its form post, authorised by a signed link.
    ['GET', '/pay/mock/{id}', 'signed', 'none'],
    ['POST', '/pay/mock/{id}', 'signed', 'raw'],
  ],
  'payment-callback': [
    ['POST', `${API_PREFIX}/payments/{provider}/callback`, 'signed', 'raw'],
    // channel_c aggregators notify by GET (docs/DESIGN.md 7).
    ['GET', `${API_PREFIX}/payments/{provider}/callback`, 'signed', 'none'],
  ],
} as const satisfies Record<string, readonly RouteRow[]>;

export const FUNCTION_GROUPS = Object.keys(GROUP_ROUTES) as FunctionGroup[];
export type FunctionGroup = keyof typeof GROUP_ROUTES;

/** `METHOD path` of each route of a group (all groups by default), as API Gateway names it. */
export type RouteKey<G extends FunctionGroup = FunctionGroup> =
  (typeof GROUP_ROUTES)[G][number] extends infer Row
    ? Row extends readonly [infer Method extends string, infer Path extends string, ...unknown[]]
      ? `${Method} ${Path}`
      : never
    : never;

const rowSpec = (group: FunctionGroup, [method, path, auth, body]: RouteRow): RouteSpec => ({
  method,
  path,
  group,
  auth,
  body,
});

/**
 * Every route, each account route also under /api/v1 (docs/DESIGN.md 4): an alias, served by its route's
 * implementation and documented once.
 */
export const ROUTES: readonly RouteSpec[] = Object.freeze([
  ...Object.entries(GROUP_ROUTES).flatMap(([group, list]) =>
    list.map((row: RouteRow) => rowSpec(group as FunctionGroup, row)),
  ),
  ...ACCOUNT_ROUTES.map((row: RouteRow) => ({
    ...rowSpec('accounts', row),
    path: `${API_PREFIX}${row[1]}`,
    aliasOf: row[1],
  })),
]);

/** Requests that match no route go here (API Gateway `$default`), so a 404 is still an envelope. */
export const DEFAULT_ROUTE_GROUP: FunctionGroup = 'meta';

export function routesOf(group: FunctionGroup): RouteSpec[] {
  return ROUTES.filter((route) => route.group === group);
}

export interface RouteMatch {
  route: RouteSpec;
  params: Record<string, string>;
}

/**
 * An API Gateway path template (`{id}` one segment, `{key+}` the rest) as a pattern, its parameter names,
 * and how many literal characters it has (API Gateway prefers the most specific route).
 */
export function compilePath(path: string): { pattern: RegExp; names: string[]; literalLength: number } {
  const names: string[] = [];
  let literalLength = 0;
  const source = path
    .split('/')
    .map((segment) => {
      const greedy = /^\{(\w+)\+\}$/.exec(segment);
      if (greedy) {
        names.push(greedy[1]!);
        return '(.+)';
      }
      const single = /^\{(\w+)\}$/.exec(segment);
      if (single) {
        names.push(single[1]!);
        return '([^/]+)';
      }
      literalLength += segment.length;
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { pattern: new RegExp(`^${source}$`), names, literalLength };
}

// Most literal characters first, as API Gateway prefers the most specific route. Compiled on the first
// match, not at import: a function is routed by API Gateway's routeKey and matches paths only for the rare
// `$default` event, so its cold start need not compile every group's table (docs/PERFORMANCE.md "Cold start").
let compiled: Array<{ route: RouteSpec } & ReturnType<typeof compilePath>> | undefined;

/** Finds the route API Gateway would pick for this method and (already decoded) path. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  compiled ??= ROUTES.map((route) => ({ route, ...compilePath(route.path) })).sort(
    (a, b) => b.literalLength - a.literalLength,
  );
  for (const candidate of compiled) {
    if (candidate.route.method !== method) continue;
    const found = candidate.pattern.exec(path);
    if (!found) continue;
    const params: Record<string, string> = {};
    candidate.names.forEach((name, index) => {
      params[name] = found[index + 1]!;
    });
    return { route: candidate.route, params };
  }
  return undefined;
}
