// The API document (OpenAPI 3.1), generated from the route table and the zod schemas that validate each
// route's body and query and describe its success data: one source, so the document cannot drift.

import * as z from '#lib/platform/zod.ts';
import type { AnyRoute, RouteImpls, Schema } from './handler.ts';
import {
  type AuthKind,
  type FunctionGroup,
  ROUTES,
  type RouteKey,
  type RouteSpec,
  routeKeyOf,
} from './routes.ts';

type JsonSchema = Record<string, unknown>;

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['code', 'message', 'data'],
  properties: {
    code: { type: 'integer', description: 'Equals the HTTP status.' },
    message: { type: 'string', description: 'A short sentence naming the field or rule.' },
    data: {
      description:
        'null, or details: `{fields: [{field, message}]}` for validation, `{retry_after}` for 429, `{limit_bytes}` for 413, `{used_bytes, quota_bytes}` for 507.',
    },
  },
};

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: kept for later handling',
  302: 'Found: a redirect (Location)',
  400: 'Malformed or invalid input (the message names the field)',
  401: 'Missing, invalid or expired credentials',
  403: 'Not allowed: a caller without the right, or a banned address (any route, docs/ABUSE.md)',
  404: 'Unknown resource (including other accounts’)',
  409: 'Conflict',
  410: 'Gone (an expired grant)',
  413: 'Payload too large',
  415: 'Type not allowed',
  429: 'Throttled (Retry-After)',
  451: 'Held for review, or a likeness of a taken-down image (docs/MODERATION.md)',
  500: 'A bug (never for bad input)',
  502: 'A payment channel failed',
  503: 'A dependency is busy or unreachable; retry (Retry-After)',
  507: 'Storage quota exceeded',
};

const SECURITY: Record<AuthKind, Array<Record<string, string[]>>> = {
  none: [],
  signed: [],
  session: [{ session: [] }],
  admin: [{ session: [] }],
  uploader: [{ session: [] }, { apiToken: [] }],
};

/**
 * The reference's sections, in reading order, each with the routes it holds (the first match wins). What a
 * reader looks for, not which function serves it.
 */
const TAGS: Array<{ name: string; description: string; match: RegExp }> = [
  {
    name: 'Accounts',
    description:
      'Registration, login (both doors), the second-factor challenge, logout, password reset and the proof-of-work challenge.',
    match: /^\/((admin\/)?auth\/(register|login|totp\/verify|me|logout|password\/reset)|api\/v1\/challenge)/,
  },
  {
    name: 'Passkeys',
    description: 'WebAuthn passkeys: registration, passwordless login, and a passkey as the second factor.',
    match: /^\/(admin\/)?auth\/passkeys/,
  },
  {
    name: 'Account security',
    description: 'TOTP, recovery codes, e-mail binding, password change, sessions and security events.',
    match: /^\/auth\//,
  },
  {
    name: 'Export and deletion',
    description: "The owner's data export (a ZIP, mailed) and deleting the account after a grace.",
    match: /^\/api\/v1\/account\//,
  },
  {
    name: 'Uploads',
    description: 'Direct upload (multipart) and presigned upload with its confirmation.',
    match: /^\/api\/v1\/upload/,
  },
  {
    name: 'Files',
    description: "The caller's files, storage usage, hotlink rules and the public gallery.",
    match: /^\/api\/v1\/(files|usage|gallery|hotlink)/,
  },
  {
    name: 'Albums and shares',
    description: 'Albums, and share links with their public pages.',
    match: /^\/(api\/v1\/(albums|shares)|s\/)/,
  },
  { name: 'API tokens', description: 'Tokens for uploaders and scripts.', match: /^\/api\/v1\/tokens/ },
  {
    name: 'Webhooks',
    description: "The owner's webhook endpoints and their deliveries.",
    match: /^\/api\/v1\/webhooks/,
  },
  { name: 'Images', description: 'Stored files and their renditions (resized, converted).', match: /^\/i\// },
  {
    name: 'Plans and orders',
    description: 'Plans, payment gateways, orders, coupons, and the hosted mock cashier.',
    match: /^\/(api\/v1\/(plans|payment-gateways|orders|coupons)|pay\/)/,
  },
  {
    name: 'Payment callbacks',
    description: "The channels' signed notifications.",
    match: /^\/api\/v1\/payments\//,
  },
  {
    name: 'Moderation',
    description: 'Reports from anyone; the moderation queue, reviews, the block list and the audit log.',
    match: /^\/api\/v1\/(reports|admin\/(moderation|blocklist|audit))/,
  },
  {
    name: 'Back office',
    description: 'Administrators: accounts, files, plans, orders, coupons, payment settings and the site.',
    match: /^\/api\/v1\/admin\//,
  },
  {
    name: 'Compatibility',
    description:
      "Lsky Pro's and Chevereto's upload APIs for their clients (docs/COMPAT.md): answers and errors in each peer's own JSON shape, which this document names but does not describe.",
    match: /^\/compat\//,
  },
  {
    name: 'Service',
    description: "Health, this document and its page, and the site's branding.",
    match: /^\/(healthz|docs|api\/v1\/(openapi|site))/,
  },
];

/** The reference section a route belongs to. */
export function tagOf(path: string): string {
  const tag = TAGS.find((candidate) => candidate.match.test(path));
  if (!tag) throw new Error(`no reference section holds ${path}: add it to TAGS in lib/http/openapi.ts`);
  return tag.name;
}

/** JSON Schema 2020-12 (the dialect of OpenAPI 3.1) of a zod schema, without the `$schema` header. */
function jsonSchema(schema: Schema, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** The statuses a route can answer besides success, from what it takes and who may call it. */
export function errorStatusesOf(route: RouteSpec, impl: AnyRoute | undefined): number[] {
  // 403 on every route: a banned address is refused before any route runs (docs/ABUSE.md "Bans").
  const statuses = new Set<number>([403, 500, 503]);
  const takesInput = route.body !== 'none' || impl?.query !== undefined || route.path.includes('{');
  if (takesInput) statuses.add(400);
  if (route.body !== 'none') statuses.add(413);
  if (route.auth !== 'none') statuses.add(401);
  if (route.path.includes('{')) statuses.add(404);
  if (route.method !== 'GET') statuses.add(409);
  if (route.group === 'accounts' || route.group === 'shares') statuses.add(429);
  for (const status of impl?.errors ?? []) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

function operationOf(route: RouteSpec, impl: AnyRoute | undefined): JsonSchema {
  const success = impl?.successStatus ?? 200;
  const responses: Record<string, unknown> = {};
  if (impl?.response) {
    responses[String(success)] = {
      description: STATUS_TEXT[success],
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['code', 'message', 'data'],
            properties: {
              code: { const: 0 },
              message: { const: 'ok' },
              data: jsonSchema(impl.response, 'output'),
            },
          },
        },
      },
    };
  } else {
    responses[String(success)] = {
      description: impl?.responseDescription ?? STATUS_TEXT[success],
      ...(impl?.responseContentType ? { content: { [impl.responseContentType]: {} } } : {}),
    };
  }
  // A route that answers in its own format (a channel's reply, a page) may refuse in that format too; the
  // chain's own refusals (size, routing, credentials) are always the envelope.
  const ownFormat =
    impl?.responseContentType && impl.responseContentType !== 'application/json'
      ? { [impl.responseContentType]: {} }
      : {};
  for (const status of errorStatusesOf(route, impl)) {
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
        ...(status < 500 ? ownFormat : {}),
      },
    };
  }

  const parameters: JsonSchema[] = [];
  for (const match of route.path.matchAll(/\{(\w+)\+?\}/g)) {
    parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  if (impl?.query) {
    const query = jsonSchema(impl.query, 'input') as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }

  const operation: JsonSchema = {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_all, next?: string) => (next ? next.toUpperCase() : ''))}`,
    tags: [tagOf(route.path)],
    ...(impl?.summary ? { summary: impl.summary } : {}),
    security: SECURITY[route.auth],
    ...(route.auth === 'admin' ? { description: 'An administrator session; a user session is 403.' } : {}),
    ...(route.auth === 'signed'
      ? { description: 'Authorised by the request itself (a channel signature or a signed link).' }
      : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
  };
  if (impl?.body) {
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: jsonSchema(impl.body, 'input') } },
    };
  } else if (impl?.requestContentType) {
    operation.requestBody = { required: true, content: { [impl.requestContentType]: {} } };
  }
  return operation;
}

const SERVICE_SERVER = { url: '/', description: 'The service address ({base_url})' };

/** A route's path as the document names it (`{key+}`, API Gateway's greedy parameter, is `{key}`). */
export function documentedPath(path: string): string {
  return path.replace(/\{(\w+)\+\}/g, '{$1}');
}

/** The whole document, from each group's route implementations. */
export function buildOpenApiDocument(
  groups: Record<FunctionGroup, RouteImpls>,
  info: OpenApiInfo,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const path = documentedPath(route.aliasOf ?? route.path);
    paths[path] ??= {};
    if (route.aliasOf) {
      // An alias is the same operation under another prefix: one entry, reachable from both servers.
      const prefix = route.path.slice(0, route.path.length - route.aliasOf.length);
      paths[path].servers = [SERVICE_SERVER, { url: prefix, description: `The same route under ${prefix}` }];
      continue;
    }
    paths[path][route.method.toLowerCase()] = operationOf(
      route,
      groups[route.group][routeKeyOf(route) as RouteKey],
    );
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [SERVICE_SERVER],
    tags: TAGS.filter((tag) => ROUTES.some((route) => tagOf(route.aliasOf ?? route.path) === tag.name)).map(
      ({ name, description }) => ({ name, description }),
    ),
    paths,
    components: {
      securitySchemes: {
        session: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A session from /auth/login, /admin/auth/login or /auth/totp/verify.',
        },
        apiToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token (`ut_...`) from POST /api/v1/tokens, or the static upload.api_token.',
        },
      },
      schemas: { ErrorEnvelope: ERROR_ENVELOPE },
    },
  };
}
