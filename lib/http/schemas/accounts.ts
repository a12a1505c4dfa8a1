// Request bodies and queries of the account endpoints (docs/DESIGN.md 5, 10): every field typed and bounded; a
// bad one is a 400 naming it. Unknown fields are dropped.
import { DEFAULT_PAGE_SIZE, pageLimitField, pageQuery } from '#lib/platform/db/paging.ts';
import * as z from '#lib/platform/zod.ts';
import { altchaField, nameCharacters } from './common.ts';

/** A missing field says so; a field of the wrong type says that. */
const text = () =>
  z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

export const emailField = z
  .email({
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be a valid e-mail address'),
  })
  .check(z.maxLength(254, 'must be at most 254 characters'));
export const usernameField = text().check(
  z.regex(/^[A-Za-z0-9_.-]{3,32}$/, 'must be 3 to 32 letters, digits, "_", "." or "-"'),
);
/** A password being set. */
export const newPasswordField = text().check(
  z.minLength(8, 'must be at least 8 characters'),
  z.maxLength(128, 'must be at most 128 characters'),
);
/** A password being checked (login, current password): no length rule but a bound. */
export const passwordField = text().check(
  z.minLength(1, 'is required'),
  z.maxLength(128, 'must be at most 128 characters'),
);
export const codeField = text().check(z.regex(/^\d{6}$/, 'must be 6 digits'));
/** At /auth/totp/verify: a TOTP code, or a recovery code (`xxxxx-xxxxx`, hyphen and case optional). */
export const secondFactorCodeField = text().check(
  z.regex(/^(\d{6}|[A-Za-z2-7]{5}-?[A-Za-z2-7]{5})$/, 'must be 6 digits or a recovery code (xxxxx-xxxxx)'),
);

/**
 * A device token (lib/accounts/device-tokens.ts) or a reset link's token: 32 bytes in base64url. At login a
 * token of another shape is simply nobody's (the login goes on without one); it is bounded all the same.
 */
const deviceTokenField = text().check(z.maxLength(256, 'must be at most 256 characters'));
const ticketField = text().check(z.regex(/^[A-Za-z0-9_-]{43}$/, 'must be a sign-in ticket'));
export const resetTokenField = text().check(z.regex(/^[A-Za-z0-9_-]{43}$/, 'must be a reset link token'));

/** A base64url field of a WebAuthn answer, bounded (an attestation object is the largest, a few KiB). */
const base64url = (max: number) =>
  text().check(
    z.minLength(1, 'is required'),
    z.maxLength(max, `must be at most ${max} characters`),
    z.regex(/^[A-Za-z0-9_-]+$/, 'must be base64url'),
  );
const credentialFields = {
  id: base64url(1400),
  rawId: base64url(1400),
  type: z.literal('public-key', { error: () => 'must be "public-key"' }),
  authenticatorAttachment: z.optional(z.enum(['platform', 'cross-platform'])),
};
/** What @simplewebauthn/browser's startRegistration answers (docs/DESIGN.md 18). */
const registrationAnswer = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url(4096),
    attestationObject: base64url(16_384),
    transports: z.optional(
      z.array(text().check(z.maxLength(32, 'must be at most 32 characters'))).check(z.maxLength(8)),
    ),
  }),
});
/** What @simplewebauthn/browser's startAuthentication answers. */
const assertionAnswer = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url(4096),
    authenticatorData: base64url(4096),
    signature: base64url(1024),
    userHandle: z.optional(base64url(128)),
  }),
});
const challengeTokenField = text().check(
  z.minLength(1, 'is required'),
  z.maxLength(4096, 'must be at most 4096 characters'),
);

export const schemas = {
  emailOnly: z.object({ email: emailField }),
  /** A code sent to an address by anyone (registration, reset): with proof of work. */
  emailWithChallenge: z.object({ email: emailField, altcha: altchaField }),
  register: z.object({
    altcha: altchaField,
    username: usernameField,
    email: emailField,
    code: codeField,
    password: newPasswordField,
  }),
  login: z.object({
    username: text().check(z.minLength(1, 'is required'), z.maxLength(254, 'must be at most 254 characters')),
    password: passwordField,
    /** What an earlier login on this device answered: its login is then not held by the account's guard. */
    device_token: z.optional(deviceTokenField),
  }),
  totpVerify: z.object({
    challenge_token: text().check(
      z.minLength(1, 'is required'),
      z.maxLength(4096, 'must be at most 4096 characters'),
    ),
    code: secondFactorCodeField,
  }),
  codeOnly: z.object({ code: codeField }),
  totpDisable: z.object({ code: z.optional(codeField), password: z.optional(passwordField) }).check(
    z.refine((body) => body.code !== undefined || body.password !== undefined, {
      message: 'code or password is required',
      path: ['code'],
    }),
  ),
  emailVerify: z.object({ email: emailField, code: codeField, password: passwordField }),
  passwordOnly: z.object({ password: passwordField }),
  passwordChange: z.object({ current_password: passwordField, new_password: newPasswordField }),
  accountDelete: z.object({ current_password: passwordField, code: z.optional(secondFactorCodeField) }),
  /** By the mailed code (`email`, `code`), or by the link mailed beside it (its `token`). */
  passwordReset: z
    .object({
      token: z.optional(resetTokenField),
      email: z.optional(emailField),
      code: z.optional(codeField),
      new_password: newPasswordField,
    })
    .check(
      z.refine((body) => body.token !== undefined || body.email !== undefined, {
        message: 'is required',
        path: ['email'],
      }),
      z.refine((body) => body.token !== undefined || body.code !== undefined, {
        message: 'is required',
        path: ['code'],
      }),
    ),
  empty: z.object({}),
  oauthTicket: z.object({ ticket: ticketField }),
  oauthSignup: z.object({ ticket: ticketField, username: usernameField }),
  currentPassword: z.object({ current_password: passwordField }),
  passkeyRegister: z.object({
    response: registrationAnswer,
    name: z.optional(
      text().check(
        z.trim(),
        z.minLength(1, 'is required'),
        z.maxLength(64, 'must be at most 64 characters'),
        nameCharacters(),
      ),
    ),
  }),
  passkeyLoginOptions: z.object({
    username: z.optional(
      text().check(z.minLength(1, 'is required'), z.maxLength(254, 'must be at most 254 characters')),
    ),
  }),
  passkeyLogin: z.object({ response: assertionAnswer }),
  passkeyChallengeOptions: z.object({ challenge_token: challengeTokenField }),
  passkeyChallenge: z.object({ challenge_token: challengeTokenField, response: assertionAnswer }),
  adminCreate: z.object({
    username: usernameField,
    email: emailField,
    password: newPasswordField,
    current_password: passwordField,
  }),
  adminStatus: z.object({
    status: z.enum(['active', 'disabled'], {
      error: (issue) => (issue.input === undefined ? 'is required' : 'must be "active" or "disabled"'),
    }),
    // The acting administrator's password: required to disable an administrator (lib/accounts/back-office.ts).
    current_password: z.optional(passwordField),
  }),
  /** Resetting another administrator's TOTP needs the acting administrator's password. */
  adminTotpReset: z.object({ current_password: z.optional(passwordField) }),
};

const queryText = z.optional(z.string().check(z.maxLength(4096, 'must be at most 4096 characters')));

export const queries = {
  /** `?door=admin`: the administrators' providers, or their sign-in. */
  door: z.object({ door: z._default(z.enum(['user', 'admin']), 'user') }),
  /** What a provider answers at the callback (the whole query goes to openid-client as it came). */
  oauthCallback: z.object({ state: queryText, code: queryText, error: queryText }),
  /** `?limit=&cursor=` of the security events. */
  page: pageQuery,
  /** `?q=&limit=&cursor=` of the back-office account search. */
  accountSearch: z.pipe(
    z.object({
      q: z.optional(z.string().check(z.maxLength(254, 'must be at most 254 characters'))),
      limit: pageLimitField,
      cursor: z.optional(z.string().check(z.maxLength(2048, 'must be at most 2048 characters'))),
    }),
    z.transform(({ q, limit, cursor }) => ({
      limit: limit ?? DEFAULT_PAGE_SIZE,
      ...(q?.trim() ? { q: q.trim() } : {}),
      ...(cursor ? { cursor } : {}),
    })),
  ),
};
