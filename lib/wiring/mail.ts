// The group's mailer (need `mail`).
import { sesClient } from '#lib/platform/aws/ses.ts';
import { logMailer, type Mailer } from '#lib/platform/mail/mailer.ts';
import { sesMailer } from '#lib/platform/mail/ses.ts';
import { type GroupResources, once } from './resources.ts';

/** SES as `mail.from` when it is set, else the log fallback. */
export function mailerOf(resources: GroupResources): Mailer {
  const { mail, aws } = resources.settings;
  return once(resources, 'mail', () =>
    mail.from
      ? sesMailer(sesClient({ region: mail.ses_region ?? aws.region, endpoint: aws.ses_endpoint }), mail.from)
      : logMailer,
  );
}
