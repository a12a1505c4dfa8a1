// The group's mailer (need `mail`).
import { sesClient } from '#lib/platform/aws/ses.ts';
import { log } from '#lib/platform/log.ts';
import { logMailer, type Mail, type Mailer } from '#lib/platform/mail/mailer.ts';
import { sesMailer } from '#lib/platform/mail/ses.ts';
import { type GroupResources, once } from './resources.ts';

/**
 * SES as `mail.from` when it is set, else the log fallback. Through a stand-in (`aws.ses_endpoint`, never
 * set in AWS) each mail is also one log line naming its address and subject, none of its codes or links.
 */
export function mailerOf(resources: GroupResources): Mailer {
  const { mail, aws } = resources.settings;
  return once(resources, 'mail', () => {
    if (!mail.from) return logMailer;
    const client = sesClient({ region: mail.ses_region ?? aws.region, endpoint: aws.ses_endpoint });
    const ses = sesMailer(client, mail.from);
    const logged = (sent: Mail) => log.info('mail', { to: sent.to, subject: sent.subject });
    return aws.ses_endpoint ? { send: (sent) => ses.send(sent).then(() => logged(sent)) } : ses;
  });
}
