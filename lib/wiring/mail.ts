// The group's mailer (need `mail`).
import { sesClient } from '#lib/platform/aws/ses.ts';
import { log } from '#lib/platform/log.ts';
import { logMailer, type Mail, type Mailer, signedMailer } from '#lib/platform/mail/mailer.ts';
import { sesMailer } from '#lib/platform/mail/ses.ts';
import { type GroupResources, once } from './resources.ts';
import { siteOf } from './site.ts';

/**
 * SES as `mail.from` when it is set, else the log fallback, each mail signed off with the site's name. Through a stand-in (`aws.ses_endpoint`, never
 * set in AWS) each mail is also one log line naming its address and subject, none of its codes or links.
 */
export function mailerOf(resources: GroupResources): Mailer {
  const { mail, aws } = resources.settings;
  const site = resources.needs.table ? siteOf(resources) : undefined;
  const signed = (mailer: Mailer) =>
    signedMailer(mailer, async () =>
      site ? (await site.current()).site.name : resources.settings.site.name,
    );
  return once(resources, 'mail', () => {
    if (!mail.from) return signed(logMailer);
    const client = sesClient({ region: mail.ses_region ?? aws.region, endpoint: aws.ses_endpoint });
    const ses = sesMailer(client, mail.from);
    const logged = (sent: Mail) => log.info('mail', { to: sent.to, subject: sent.subject });
    return signed(aws.ses_endpoint ? { send: (sent) => ses.send(sent).then(() => logged(sent)) } : ses);
  });
}
