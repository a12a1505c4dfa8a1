// Every administrator action in the audit log (lib/http/admin-audit.ts): its event is written before the route
// runs, so an action whose event cannot be written never runs; its outcome (status, the id a creation made)
// is written after; reads are not actions; and a group with an administrator action cannot be built without
// a log to write to.
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '#lib/accounts/audit-log.ts';
import { errors } from '#lib/core/errors.ts';
import { type AdminActionLog, actionOf } from '#lib/http/admin-audit.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { type Authenticator, defineRoute, handlerOverRoutes } from '#lib/http/handler.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';

const admin: Authenticator = async () => ({ accountId: 'admin-1', role: 'admin', via: 'session' });

function memoryLog(failing = false) {
  const events: Array<Omit<AuditEvent, 'at'>> = [];
  const log: AdminActionLog = {
    record: async (event) => {
      if (failing) throw Object.assign(new Error('table unreachable'), { name: 'ServiceUnavailable' });
      const id = `ev${events.length}`;
      events.push({ id, ...event });
      return { id };
    },
    finish: async (id, outcome) => {
      const event = events.find((candidate) => candidate.id === id);
      if (event) Object.assign(event, outcome);
    },
  };
  return { log, events };
}

function accountsHandler(log: AdminActionLog, runs: string[]) {
  return handlerOverRoutes(
    'accounts',
    {
      'POST /api/v1/admin/accounts': defineRoute({
        run: async () => {
          runs.push('create');
          return created({ id: 'new-account', username: 'made' });
        },
      }),
      'PATCH /api/v1/admin/accounts/{id}': defineRoute({
        run: async () => {
          runs.push('update');
          throw errors.conflict('not now');
        },
      }),
      'GET /api/v1/admin/accounts': defineRoute({ run: async () => ok({ items: [] }) }),
    },
    { authenticate: admin, audit: () => log },
  );
}

const call = (handler: ReturnType<typeof accountsHandler>, method: string, path: string) =>
  handler(
    apiEvent({
      method,
      path,
      body: method === 'GET' ? undefined : { password: 'never-logged-1', status: 'x' },
      sourceIp: '203.0.113.9',
    }),
    lambdaContext,
  );

describe('the audit of administrator actions', () => {
  it('records who, what, on what and from where before acting, and the outcome after', async () => {
    const { log, events } = memoryLog();
    const runs: string[] = [];
    const handler = accountsHandler(log, runs);

    const made = await call(handler, 'POST', '/api/v1/admin/accounts');
    const refused = await call(handler, 'PATCH', '/api/v1/admin/accounts/a-1');
    const listed = await call(handler, 'GET', '/api/v1/admin/accounts');

    expect([made.statusCode, refused.statusCode, listed.statusCode]).toEqual([201, 409, 200]);
    expect(runs).toEqual(['create', 'update']);
    expect(events).toEqual([
      {
        id: 'ev0',
        actor_id: 'admin-1',
        action: 'accounts.create',
        target: 'accounts:new-account',
        from: '203.0.113.9',
        details: { fields: ['password', 'status'] },
        status: 201,
      },
      {
        id: 'ev1',
        actor_id: 'admin-1',
        action: 'accounts.update',
        target: 'accounts:a-1',
        from: '203.0.113.9',
        details: { fields: ['password', 'status'] },
        status: 409,
      },
    ]);
    expect(JSON.stringify(events)).not.toContain('never-logged-1');
  });

  it('does not act when its event cannot be written', async () => {
    const { log } = memoryLog(true);
    const runs: string[] = [];

    const answer = await call(accountsHandler(log, runs), 'POST', '/api/v1/admin/accounts');

    expect(answer.statusCode).toBe(503);
    expect(runs).toEqual([]);
  });

  it('is required of a group with an administrator action', () => {
    const build = () =>
      handlerOverRoutes(
        'accounts',
        { 'POST /api/v1/admin/accounts': defineRoute({ run: async () => ok({}) }) },
        { authenticate: admin },
      );
    expect(build).toThrow(/needs the audit log/);
  });

  it('names actions by the path after admin and what is done', () => {
    const names = [
      ['POST', '/api/v1/admin/bans'],
      ['DELETE', '/api/v1/admin/bans/{id}'],
      ['PATCH', '/api/v1/admin/accounts/{id}'],
      ['POST', '/api/v1/admin/accounts/{id}/totp/reset'],
      ['POST', '/api/v1/admin/orders/{id}/refund'],
      ['PUT', '/api/v1/admin/payment'],
    ].map(([method, path]) => actionOf({ method: method as 'POST', path: path as string }));
    expect(names).toEqual([
      'bans.create',
      'bans.delete',
      'accounts.update',
      'accounts.totp.reset',
      'orders.refund',
      'payment.update',
    ]);
  });
});
