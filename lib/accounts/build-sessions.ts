// Builds the token signer and session service from what they use; production and tests call the same.
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { SessionService } from './sessions.ts';
import { TokenSigner } from './tokens.ts';

export interface SessionsInput {
  table: Table;
  masterKey: () => Promise<MasterKey>;
  /** `auth.session_ttl_hours`. */
  ttlHours: number;
}

export interface Sessions {
  signer: TokenSigner;
  sessions: SessionService;
}

export function buildSessions(input: SessionsInput): Sessions {
  const signer = new TokenSigner(input.table, input.masterKey);
  return { signer, sessions: new SessionService(input.table, signer, input.ttlHours) };
}
