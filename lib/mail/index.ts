// This container's mailer, chosen by configuration: SES when `mail.from` is set, else the log fallback.
import { config } from '../config/index.ts';
import { logMailer, type Mailer } from './mailer.ts';
import { createSesClient, sesMailer } from './ses.ts';

export type { Mail, Mailer } from './mailer.ts';

let mailer: Mailer | undefined;

export function serviceMailer(): Mailer {
  if (mailer) return mailer;
  const from = config.mail.from;
  mailer = from
    ? sesMailer(
        createSesClient({
          region: config.mail.ses_region ?? config.aws.region,
          endpoint: config.aws.ses_endpoint,
        }),
        from,
      )
    : logMailer;
  return mailer;
}
