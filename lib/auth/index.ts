// This container's token signer and session service, built once from configuration.
import { config } from '../config/index.ts';
import { masterKey } from '../crypto/index.ts';
import { serviceTable } from '../db/index.ts';
import { SessionService } from './sessions.ts';
import { TokenSigner } from './tokens.ts';

let signer: TokenSigner | undefined;
let sessions: SessionService | undefined;

export function tokenSigner(): TokenSigner {
  signer ??= new TokenSigner(serviceTable(), masterKey);
  return signer;
}

export function sessionService(): SessionService {
  sessions ??= new SessionService(serviceTable(), tokenSigner(), config.auth.session_ttl_hours);
  return sessions;
}
