// Every account flow, one function per endpoint (the auth handler calls exactly one of these).
import { createAdministratorAsAdmin, listAccounts, resetAccountTotp, setAccountStatus } from './admin.ts';
import { verifyChallenge } from './challenge.ts';
import { sendEmailCode, unbindEmail, verifyEmail } from './email.ts';
import { login } from './login.ts';
import { changePassword, resetPassword, sendResetCode } from './password-flows.ts';
import { createAdministrator, register, sendRegistrationCode } from './registration.ts';
import { listSessions, logout, revokeOtherSessions, revokeSession } from './session-flows.ts';
import { disableTotp, enableTotp, regenerateRecoveryCodes, setupTotp } from './totp.ts';

export const flows = {
  sendRegistrationCode,
  register,
  login,
  verifyChallenge,
  setupTotp,
  enableTotp,
  disableTotp,
  regenerateRecoveryCodes,
  sendEmailCode,
  verifyEmail,
  unbindEmail,
  changePassword,
  sendResetCode,
  resetPassword,
  listSessions,
  revokeSession,
  revokeOtherSessions,
  logout,
  /** Without a session (the admin:create script); the back office goes through createAdministratorAsAdmin. */
  createAdministrator,
  createAdministratorAsAdmin,
  listAccounts,
  setAccountStatus,
  resetAccountTotp,
};
