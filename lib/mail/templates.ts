// The messages the service sends: plain text plus a simple HTML version of the same words.
import { escapeHtml } from '../html.ts';
import type { Mail } from './mailer.ts';

export type CodePurposeText = 'register' | 'email_bind' | 'reset';

const SUBJECTS: Record<CodePurposeText, string> = {
  register: 'Your registration code',
  email_bind: 'Your e-mail verification code',
  reset: 'Your password reset code',
};

const INTROS: Record<CodePurposeText, string> = {
  register: 'Use this code to finish creating your account:',
  email_bind: 'Use this code to verify this e-mail address for your account:',
  reset: 'Use this code to set a new password for your account:',
};

export { escapeHtml } from '../html.ts';

function page(paragraphs: string[]): string {
  const body = paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`).join('\n');
  return `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n${body}\n</body></html>\n`;
}

export function codeMail(purpose: CodePurposeText, to: string, code: string, validMinutes: number): Mail {
  const closing = `The code is valid for ${validMinutes} minutes and can be used once. If you did not ask for it, ignore this message.`;
  const text = `${INTROS[purpose]}\n\n    ${code}\n\n${closing}\n`;
  const html = `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n<p>${escapeHtml(INTROS[purpose])}</p>\n<p style="font-size: 1.6em; letter-spacing: 0.2em"><strong>${escapeHtml(code)}</strong></p>\n<p>${escapeHtml(closing)}</p>\n</body></html>\n`;
  return { to, subject: SUBJECTS[purpose], text, html, code };
}

/** `alice@example.com` -> `a***@example.com`: the old address learns of the change, not the new address. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

export function emailChangedMail(oldEmail: string, newEmail: string, username: string): Mail {
  const lines = [
    `The e-mail address of the account "${username}" was changed from this address to ${maskEmail(newEmail)}.`,
    'If you made this change, no action is needed. If you did not, reset your password and contact support.',
  ];
  return {
    to: oldEmail,
    subject: 'Your account e-mail address was changed',
    text: `${lines.join('\n\n')}\n`,
    html: page(lines),
  };
}
