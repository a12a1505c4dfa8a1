// This container's account services, built once from configuration.
import { sessionService, tokenSigner } from '../auth/index.ts';
import { config } from '../config/index.ts';
import { masterKey } from '../crypto/index.ts';
import { serviceTable } from '../db/index.ts';
import { serviceMailer } from '../mail/index.ts';
import { AccountContext } from './context.ts';

let context: AccountContext | undefined;

export function accountContext(): AccountContext {
  context ??= new AccountContext({
    table: serviceTable(),
    mailer: serviceMailer(),
    masterKey,
    sessions: sessionService(),
    signer: tokenSigner(),
    limits: { ipPerMinute: config.auth.ip_limit_per_minute },
    totpIssuer: config.auth.totp_issuer,
  });
  return context;
}
