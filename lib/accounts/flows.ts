// Every account flow, one function per endpoint (the auth handler calls exactly one of these).
import { verifyPassword } from '../auth/passwords.ts';
import type { AccountContext } from './context.ts';
import { sendEmailCode, unbindEmail, verifyEmail } from './email.ts';
import { login } from './login.ts';
import { changePassword, resetPassword, sendResetCode } from './password-flows.ts';
import { createAdministrator, register, sendRegistrationCode } from './registration.ts';
import type { Account } from './repository.ts';
import { disableTotp, enableTotp, setupTotp, verifyChallenge } from './totp.ts';

export const flows = {
  sendRegistrationCode,
  register,
  login,
  verifyChallenge,
  setupTotp,
  enableTotp,
  disableTotp: (ctx: AccountContext, account: Account, input: { code?: string; password?: string }) =>
    disableTotp(ctx, account, input, verifyPassword),
  sendEmailCode,
  verifyEmail,
  unbindEmail,
  changePassword,
  sendResetCode,
  resetPassword,
  createAdministrator,
};
