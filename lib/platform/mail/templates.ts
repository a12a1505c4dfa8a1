// The messages the service sends: plain text plus a simple HTML version of the same words.
import { escapeHtml } from '#lib/platform/html.ts';
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
  reset:
    'Use this code to set a new password for your account (this signs out every session and device, revokes every API token and removes every passkey):',
};

function page(paragraphs: string[]): string {
  const body = paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`).join('\n');
  return `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n${body}\n</body></html>\n`;
}

/**
 * A code mail; `link` (a reset link) is offered beside the code. The link is in the text and HTML only, not
 * in `code`, so the no-mail fallback, which logs `code`, never writes a link to the log.
 */
export function codeMail(
  purpose: CodePurposeText,
  to: string,
  code: string,
  validMinutes: number,
  link?: string,
): Mail {
  const closing = `The code is valid for ${validMinutes} minutes and can be used once. If you did not ask for it, ignore this message.`;
  const linkText = 'Or open this link to set a new password (valid as long as the code):';
  const text = `${INTROS[purpose]}\n\n    ${code}\n\n${link ? `${linkText}\n\n    ${link}\n\n` : ''}${closing}\n`;
  const linkHtml = link
    ? `<p>${escapeHtml(linkText)}</p>\n<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>\n`
    : '';
  const html = `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n<p>${escapeHtml(INTROS[purpose])}</p>\n<p style="font-size: 1.6em; letter-spacing: 0.2em"><strong>${escapeHtml(code)}</strong></p>\n${linkHtml}<p>${escapeHtml(closing)}</p>\n</body></html>\n`;
  return { to, subject: SUBJECTS[purpose], text, html, code };
}

/** `alice@example.com` -> `a***@example.com`: the old address learns of the change, not the new address. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

// ---- security notices (docs/ACCOUNTS.md "Notice mails") --------------------------------------------

export type SecurityNoticeKind =
  | 'password_changed'
  | 'password_reset'
  | 'totp_enabled'
  | 'totp_disabled'
  | 'totp_reset'
  | 'recovery_code_used'
  | 'recovery_codes_regenerated'
  | 'email_changed'
  | 'passkey_added'
  | 'passkey_removed'
  | 'deletion_scheduled'
  | 'provider_linked'
  | 'provider_unlinked';

export interface NoticeFacts {
  username: string;
  /** When it happened: named in the mail, UTC. */
  at: Date;
  /** The source address of the request that did it ('' when unknown). */
  ip: string;
  /** email_changed: the new address, shown masked. */
  newEmail?: string;
  /** recovery_code_used: how many codes are left. */
  remaining?: number;
}

const NOTICE_SUBJECTS: Record<SecurityNoticeKind, string> = {
  password_changed: 'Your password was changed',
  password_reset: 'Your password was reset',
  totp_enabled: 'Two-step verification was turned on',
  totp_disabled: 'Two-step verification was turned off',
  totp_reset: 'Two-step verification was reset by an administrator',
  recovery_code_used: 'A recovery code was used to sign in',
  recovery_codes_regenerated: 'New recovery codes were created',
  email_changed: 'Your account e-mail address was changed',
  passkey_added: 'A passkey was added to your account',
  passkey_removed: 'A passkey was removed from your account',
  deletion_scheduled: 'Your account will be deleted in 7 days',
  provider_linked: 'A sign-in provider was linked to your account',
  provider_unlinked: 'A sign-in provider was unlinked from your account',
};

function noticeWhat(kind: SecurityNoticeKind, facts: NoticeFacts): string[] {
  const account = `the account "${facts.username}"`;
  switch (kind) {
    case 'password_changed':
      return [
        `The password of ${account} was changed.`,
        'Every session of the account was signed out, except the one that made the change. API tokens keep working.',
      ];
    case 'password_reset':
      return [
        `The password of ${account} was reset with a code or link sent to this address.`,
        'Every session of the account was signed out, every device it was used on must log in again with the new password, every API token was revoked (create new tokens for your upload tools) and every passkey was removed (add yours again on the security page).',
      ];
    case 'totp_enabled':
      return [`Two-step verification (an authenticator app) was turned on for ${account}.`];
    case 'totp_disabled':
      return [`Two-step verification was turned off for ${account}. Signing in now needs the password only.`];
    case 'totp_reset':
      return [
        `An administrator turned two-step verification off for ${account} and removed its recovery codes and passkeys.`,
        'Every session of the account was signed out. Turn two-step verification on again after you sign in.',
      ];
    case 'recovery_code_used':
      return [
        `A recovery code was used to sign in to ${account}. Each code works once; ${facts.remaining ?? 0} unused code(s) remain.`,
      ];
    case 'recovery_codes_regenerated':
      return [`New recovery codes were created for ${account}. The previous codes no longer work.`];
    case 'passkey_added':
      return [
        `A passkey was added to ${account}. It signs in without the password, and answers the second step.`,
        'If you did not add it, remove it on the security page and change your password.',
      ];
    case 'passkey_removed':
      return [`A passkey was removed from ${account}. It no longer signs in.`];
    case 'deletion_scheduled':
      return [
        `The deletion of ${account} was asked for: in 7 days it is deleted with every file, album and share.`,
        'Signing in before then cancels it. If you did not ask for it, sign in, then change your password.',
      ];
    case 'provider_linked':
      return [
        `A sign-in provider was linked to ${account}: signing in there now signs in here.`,
        'If you did not link it, unlink it on the security page and change your password.',
      ];
    case 'provider_unlinked':
      return [`A sign-in provider was unlinked from ${account}. It no longer signs in.`];
    case 'email_changed':
      return [
        facts.newEmail
          ? `The e-mail address of ${account} was changed from this address to ${maskEmail(facts.newEmail)}.`
          : `This address was removed from ${account}: it no longer receives its codes and notices.`,
      ];
  }
}

/**
 * To every administrator: a payment channel's gateway address changed (docs/PAYMENTS-GUIDE.md). It names the
 * fields and the host they now point to, never a key; an administrator who did not expect it acts at once.
 */
export function paymentGatewayNoticeMail(
  to: string,
  facts: { actor: string; changes: Array<{ field: string; host: string | null }>; at: Date; ip: string },
): Mail {
  const when = `${facts.at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const lines = [
    `The administrator "${facts.actor}" changed where a payment channel is reached:`,
    ...facts.changes.map(({ field, host }) => `${field}: now ${host ?? 'cleared (the channel default)'}`),
    `When: ${when}. From address: ${facts.ip || 'unknown'}.`,
    'Order queries send the merchant key to this address. If the change was not expected, restore the address and replace the channel keys now.',
  ];
  return {
    to,
    subject: 'A payment gateway address was changed',
    text: `${lines.join('\n\n')}\n`,
    html: page(lines),
  };
}

/** A notice of a security change: what happened, when (UTC) and from which address. */
export function securityNoticeMail(kind: SecurityNoticeKind, to: string, facts: NoticeFacts): Mail {
  const when = `${facts.at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const lines = [
    ...noticeWhat(kind, facts),
    `When: ${when}. From address: ${facts.ip || 'unknown'}.`,
    'If this was you, no action is needed. If it was not, reset your password now and contact support.',
  ];
  return { to, subject: NOTICE_SUBJECTS[kind], text: `${lines.join('\n\n')}\n`, html: page(lines) };
}

/** To the buyer: (part of) an order was refunded (docs/DESIGN.md 17); amounts in yuan, never a payment detail. */
export function refundNoticeMail(
  to: string,
  facts: {
    orderId: string;
    planName: string;
    amountCents: number;
    refundedCents: number;
    totalCents: number;
  },
): Mail {
  const yuan = (cents: number) => `${(cents / 100).toFixed(2)} CNY`;
  const full = facts.refundedCents >= facts.totalCents;
  const lines = [
    `${yuan(facts.amountCents)} of your order ${facts.orderId} (${facts.planName}) was refunded.`,
    full
      ? 'The order is now refunded in full, and what it granted has been taken back.'
      : `Refunded so far: ${yuan(facts.refundedCents)} of ${yuan(facts.totalCents)}.`,
    'The money returns the way it was paid; your bank or payment app may take a few days to show it.',
  ];
  return { to, subject: 'Your order was refunded', text: `${lines.join('\n\n')}\n`, html: page(lines) };
}

/** To the owner of a paid plan, once per grant, some days before it ends (docs/DESIGN.md 17). */
export function renewalReminderMail(to: string, facts: { planName: string; endsAt: Date }): Mail {
  const when = `${facts.endsAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const lines = [
    `Your plan "${facts.planName}" ends on ${when}.`,
    'Buy it again before then to extend it from its current end; after it ends your storage quota returns to the default.',
  ];
  return { to, subject: 'Your plan ends soon', text: `${lines.join('\n\n')}\n`, html: page(lines) };
}

/** docs/UPLOADS.md "Bandwidth": an owner's files served past 80 % or 100 % of the month's cap. */
export function bandwidthNoticeMail(
  to: string,
  facts: { percent: 80 | 100; used: number; cap: number; gracePercent: number },
): Mail {
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  const lines = [
    `Your files have been served ${mib(facts.used)} this month: ${facts.percent} % of your plan's ${mib(facts.cap)}.`,
    `Past ${100 + facts.gracePercent} % they stop being served until the month ends or you choose a bigger plan.`,
  ];
  return {
    to,
    subject: `Bandwidth: ${facts.percent} % of this month's used`,
    text: `${lines.join('\n\n')}\n`,
    html: page(lines),
  };
}

/** An account export is ready (docs/ACCOUNTS.md "Export"): the service's own link, valid 24 hours. */
export function exportReadyMail(
  to: string,
  facts: { username: string; link: string; expiresAt: Date; files: number },
): Mail {
  const until = `${facts.expiresAt.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const lines = [
    `The export of the account "${facts.username}" is ready: ${facts.files} original file(s) and a JSON of its records, albums, shares, orders and security events, in one ZIP.`,
    `Download it until ${until} from this link:`,
    facts.link,
    'If you did not ask for it, change your password: someone signed in to your account.',
  ];
  return {
    to,
    subject: 'Your data export is ready',
    text: `${lines.join('\n\n')}\n`,
    html: page(lines),
    link: facts.link,
  };
}
