// Mail through Amazon SES (API v1 SendEmail); locally through the SES-compatible stand-in at
// `aws.ses_endpoint`.
import { type SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { errors } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from './mailer.ts';

export function sesMailer(client: SESClient, from: string): Mailer {
  return {
    async send(mail) {
      try {
        await client.send(
          new SendEmailCommand({
            Source: from,
            Destination: { ToAddresses: [mail.to] },
            Message: {
              Subject: { Data: mail.subject, Charset: 'UTF-8' },
              Body: {
                Text: { Data: mail.text, Charset: 'UTF-8' },
                Html: { Data: mail.html, Charset: 'UTF-8' },
              },
            },
          }),
        );
      } catch (error) {
        // Neither the message (it may hold a code) nor the address goes to the log.
        log.error('mail could not be sent', { error_name: (error as { name?: string })?.name });
        throw errors.serviceUnavailable('The e-mail could not be sent; try again later');
      }
    },
  };
}
