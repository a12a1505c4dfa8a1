// The caller's own sessions (docs/DESIGN.md 10): list them, end one, end all but the current one, log out.
// Session ids are looked up only inside the caller's partition, so another account's id is simply absent.
import { errors } from '#lib/core/errors.ts';
import type { ClientInfo } from './client.ts';
import type { AccountContext } from './context.ts';
import type { Account } from './repository.ts';

/** GET /auth/sessions: live sessions, newest first, the caller's own marked `current`. */
export async function listSessions(ctx: AccountContext, account: Account, currentJti: string | undefined) {
  return ctx.sessions.list(account, currentJti);
}

/**
 * DELETE /auth/sessions/{id}: ends that session (the current one too, like a logout). Of concurrent
 * revocations of one session exactly one succeeds (a conditional delete); the rest are 404.
 */
export async function revokeSession(ctx: AccountContext, account: Account, id: string, client: ClientInfo) {
  if (!(await ctx.sessions.revoke(account, id))) throw errors.notFound('session: not found');
  await ctx.events.record(account.id, 'session_revoked', client);
  return { id, revoked: true };
}

/** POST /auth/sessions/revoke-others: ends every live session of the account but the caller's. */
export async function revokeOtherSessions(
  ctx: AccountContext,
  account: Account,
  currentJti: string | undefined,
  client: ClientInfo,
) {
  const others = (await ctx.sessions.list(account, currentJti)).filter((session) => !session.current);
  const ended = await Promise.all(others.map((session) => ctx.sessions.revoke(account, session.id)));
  const revoked = ended.filter(Boolean).length;
  if (revoked > 0) await ctx.events.record(account.id, 'session_revoked', client);
  return { revoked };
}

/** POST /auth/logout: ends the current session. */
export async function logout(ctx: AccountContext, account: Account, currentJti: string | undefined) {
  if (currentJti) await ctx.sessions.revoke(account, currentJti);
  return null;
}
