// The `data` of each account endpoint's success envelope, as zod schemas: the API document is generated
// from them and the end-to-end tests check answers against them (docs/ACCOUNTS.md has the same shapes).

import { LOGIN_METHODS, SECURITY_EVENT_TYPES } from '#lib/accounts/security-events.ts';
import * as z from '#lib/platform/zod.ts';

const timestamp = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/));

export const userData = z.object({
  id: z.string(),
  username: z.string(),
  email: z.nullable(z.string()),
  email_verified: z.boolean(),
  role: z.enum(['user', 'admin']),
  totp_enabled: z.boolean(),
  created_at: timestamp,
});

const sessionData = z.object({
  token: z.string(),
  token_type: z.literal('Bearer'),
  expires_at: timestamp,
  user: userData,
});

/** A login's session: with the device token the client keeps for its next login (docs/ACCOUNTS.md). */
const loginSessionData = z.extend(sessionData, { device_token: z.string() });

const challengeData = z.object({
  totp_required: z.literal(true),
  challenge_token: z.string(),
  expires_at: timestamp,
  methods: z.array(z.enum(['totp', 'recovery_code', 'passkey'])),
});

const securityData = z.object({
  totp_enabled: z.boolean(),
  totp_pending: z.boolean(),
  email: z.nullable(z.string()),
  email_verified: z.boolean(),
  recovery_codes_remaining: z.number().check(z.int(), z.minimum(0)),
  passkeys: z.number().check(z.int(), z.minimum(0)),
  deletion_scheduled_for: z.nullable(timestamp),
});

const passkeyData = z.object({
  id: z.string(),
  name: z.string(),
  created_at: timestamp,
  last_used_at: z.nullable(timestamp),
});

/** Options for the browser's WebAuthn call (@simplewebauthn/browser reads them as they are). */
const webauthnOptions = z.looseObject({ challenge: z.string() });

const recoveryCodes = z.array(z.string().check(z.regex(/^[a-z2-7]{5}-[a-z2-7]{5}$/))).check(z.length(10));

const usage = z.object({
  used_bytes: z.number().check(z.int()),
  file_count: z.number().check(z.int()),
  quota_bytes: z.nullable(z.number().check(z.int())),
  bandwidth_bytes_used: z
    .number()
    .check(z.int(), z.minimum(0), z.describe("Bytes of the account's files served this month (UTC).")),
});

export const adminAccountData = z.extend(userData, {
  status: z.enum(['active', 'disabled']),
  usage: z.nullable(usage),
});

export const responses = {
  codeSent: z.object({ expires_at: timestamp }),
  user: userData,
  session: sessionData,
  loginSession: loginSessionData,
  sessionOrChallenge: z.union([loginSessionData, challengeData]),
  security: securityData,
  deletionScheduled: z.object({ scheduled_for: timestamp }),
  totpSetup: z.object({
    secret: z.string(),
    uri: z.string().check(z.regex(/^otpauth:\/\/totp\//)),
    qr_data_url: z.string().check(z.regex(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/)),
  }),
  totpEnabled: z.extend(securityData, { totp_enabled: z.literal(true), recovery_codes: recoveryCodes }),
  recoveryCodes: z.object({
    recovery_codes: recoveryCodes,
    recovery_codes_remaining: z.number().check(z.int()),
  }),
  nothing: z.null(),
  sessions: z.array(
    z.object({
      id: z.string(),
      current: z.boolean(),
      created_at: timestamp,
      expires_at: timestamp,
      ip: z.nullable(z.string()),
      user_agent: z.nullable(z.string()),
    }),
  ),
  sessionRevoked: z.object({ id: z.string(), revoked: z.literal(true) }),
  othersRevoked: z.object({ revoked: z.number().check(z.int(), z.minimum(0)) }),
  securityEvents: z.object({
    items: z.array(
      z.object({
        type: z.enum(SECURITY_EVENT_TYPES),
        at: timestamp,
        ip: z.nullable(z.string()),
        user_agent: z.nullable(z.string()),
        method: z.optional(z.enum(LOGIN_METHODS)),
      }),
    ),
    next_cursor: z.nullable(z.string()),
  }),
  passkey: passkeyData,
  passkeys: z.array(passkeyData),
  passkeyRemoved: z.object({ id: z.string(), removed: z.literal(true) }),
  webauthnOptions,
  providers: z.array(z.object({ id: z.string(), label: z.string() })),
  oauthAnswer: z.union([
    loginSessionData,
    challengeData,
    z.object({
      signup: z.object({ provider: z.string(), label: z.string(), email: z.string(), ticket: z.string() }),
    }),
  ]),
  identities: z.array(
    z.object({
      provider: z.string(),
      label: z.string(),
      email: z.nullable(z.string()),
      linked_at: timestamp,
    }),
  ),
  linkStarted: z.object({ url: z.string() }),
  identityUnlinked: z.object({ provider: z.string(), unlinked: z.literal(true) }),
  adminAccount: adminAccountData,
  adminAccounts: z.object({ items: z.array(adminAccountData), next_cursor: z.nullable(z.string()) }),
};
