// Request bodies of the account endpoints (DESIGN.md 5): every field typed and bounded; a bad one is a
// 400 naming it. Unknown fields are dropped.
import * as z from 'zod';

export const emailField = z
  .email('must be a valid e-mail address')
  .max(254, 'must be at most 254 characters');
export const usernameField = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{3,32}$/, 'must be 3 to 32 letters, digits, "_", "." or "-"');
/** A password being set. */
export const newPasswordField = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(128, 'must be at most 128 characters');
/** A password being checked (login, current password): no length rule but a bound. */
export const passwordField = z.string().min(1, 'is required').max(128, 'must be at most 128 characters');
export const codeField = z.string().regex(/^\d{6}$/, 'must be 6 digits');

export const schemas = {
  emailOnly: z.object({ email: emailField }),
  register: z.object({
    username: usernameField,
    email: emailField,
    code: codeField,
    password: newPasswordField,
  }),
  login: z.object({
    username: z.string().min(1, 'is required').max(254, 'must be at most 254 characters'),
    password: passwordField,
  }),
  totpVerify: z.object({
    challenge_token: z.string().min(1, 'is required').max(4096, 'must be at most 4096 characters'),
    code: codeField,
  }),
  codeOnly: z.object({ code: codeField }),
  totpDisable: z
    .object({ code: codeField.optional(), password: passwordField.optional() })
    .refine((body) => body.code !== undefined || body.password !== undefined, {
      message: 'code or password is required',
      path: ['code'],
    }),
  emailVerify: z.object({ email: emailField, code: codeField, password: passwordField.optional() }),
  passwordOnly: z.object({ password: passwordField }),
  passwordChange: z.object({ current_password: passwordField, new_password: newPasswordField }),
  passwordReset: z.object({ email: emailField, code: codeField, new_password: newPasswordField }),
  empty: z.object({}),
  adminCreate: z.object({ username: usernameField, email: emailField, password: newPasswordField }),
};
