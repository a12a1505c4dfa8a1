// Mail: SES when `mail.from` is set, else the log fallback (lib/wiring/resources.ts chooses).
export type { Mail, Mailer } from './mailer.ts';
export { logMailer } from './mailer.ts';
export { sesMailer } from './ses.ts';
