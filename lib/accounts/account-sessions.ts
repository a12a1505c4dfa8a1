// The caller's own sessions (docs/DESIGN.md 10): list them, end one, end all but the current one, log out.
// Session ids are looked up only inside the caller's partition, so another account's id is simply absent.
import { errors } from '#lib/core/errors.ts';
import type { ClientInfo } from './client.ts';
import type { DeviceTokens } from './device-tokens.ts';
import type { Account } from './model.ts';
import type { SecurityEvents } from './security-events.ts';
import type { SessionService } from './sessions.ts';

export interface AccountSessionsDeps {
  sessions: SessionService;
  devices: DeviceTokens;
  events: SecurityEvents;
}

export class AccountSessions {
  constructor(private readonly deps: AccountSessionsDeps) {}

  /** GET /auth/sessions: live sessions, newest first, the caller's own marked `current`. */
  async list(account: Account, currentJti: string | undefined) {
    return this.deps.sessions.list(account, currentJti);
  }

  /**
   * DELETE /auth/sessions/{id}: ends that session (the current one too, like a logout). Of concurrent
   * revocations of one session exactly one succeeds (a conditional delete); the rest are 404.
   */
  async revoke(account: Account, id: string, client: ClientInfo) {
    if (!(await this.deps.sessions.revoke(account, id))) throw errors.notFound('session: not found');
    await this.deps.events.record(account.id, 'session_revoked', client);
    return { id, revoked: true };
  }

  /**
   * POST /auth/sessions/revoke-others: ends every live session of the account but the caller's, and every
   * device token but the one issued with the caller's session (docs/ACCOUNTS.md "Device tokens").
   */
  async revokeOthers(account: Account, currentJti: string | undefined, client: ClientInfo) {
    const { sessions, devices, events } = this.deps;
    const others = (await sessions.list(account, currentJti)).filter((session) => !session.current);
    const [ended] = await Promise.all([
      Promise.all(others.map((session) => sessions.revoke(account, session.id))),
      devices.endOthers(account.id, currentJti),
    ]);
    const revoked = ended.filter(Boolean).length;
    if (revoked > 0) await events.record(account.id, 'session_revoked', client);
    return { revoked };
  }

  /** POST /auth/logout: ends the current session. */
  async logout(account: Account, currentJti: string | undefined) {
    if (currentJti) await this.deps.sessions.revoke(account, currentJti);
    return null;
  }
}
