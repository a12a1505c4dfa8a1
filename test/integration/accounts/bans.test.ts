// Address bans (docs/ABUSE.md "Bans") on DynamoDB Local: a banned network hears 403 with the ban's reason on
// a route of every group API Gateway reaches, each group reading the bans through its own need (meta and
// render have no table but the `BANS` partition); lifting restores access (here at once, elsewhere within
// the refresh); a ban ends on time whatever the cached copy; IPv6 prefixes and IPv4-mapped addresses; bad
// input is a 400 naming the field; only administrators manage bans, never over their own address.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFilesHandler } from '#functions/files/handler.ts';
import { needs as filesNeeds } from '#functions/files/needs.ts';
import { createMetaHandler } from '#functions/meta/handler.ts';
import { needs as metaNeeds } from '#functions/meta/needs.ts';
import { createPaymentCallbackHandler } from '#functions/payment-callback/handler.ts';
import { needs as callbackNeeds } from '#functions/payment-callback/needs.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs as paymentsNeeds } from '#functions/payments/needs.ts';
import { createRenderHandler } from '#functions/render/handler.ts';
import { needs as renderNeeds } from '#functions/render/needs.ts';
import { createSharesHandler } from '#functions/shares/handler.ts';
import { needs as sharesNeeds } from '#functions/shares/needs.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import type { GroupHandler } from '#lib/http/handler.ts';
import { API_PREFIX } from '#lib/http/routes.ts';
import { banCheckOf } from '#lib/wiring/bans.ts';
import type { GroupNeeds } from '#lib/wiring/needs.ts';
import { movableClock } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const BANS = `${API_PREFIX}/admin/bans`;
const ADMIN_IP = '198.51.100.1';
const PASSWORD = 'admin-password-1';

/** The service on one movable clock: every group's handler as its entry builds it, each with its own bans. */
async function world() {
  const clock = movableClock();
  const deps = testDeps({ clock });
  const bansOf = (group: string, needs: GroupNeeds) =>
    banCheckOf(testResources(group, needs, { settings: deps.settings, clock }));
  const { groups } = deps;
  const handlers: Record<string, GroupHandler> = {
    accounts: deps.handlers.accounts,
    files: createFilesHandler(() => groups.files, {
      maxUploadBytes: deps.settings.upload.max_bytes,
      bans: bansOf('files', filesNeeds),
    }),
    shares: createSharesHandler(() => groups.shares, { bans: bansOf('shares', sharesNeeds) }),
    meta: createMetaHandler({ bans: bansOf('meta', metaNeeds) }),
    render: createRenderHandler(() => groups.render, { bans: bansOf('render', renderNeeds) }),
    payments: createPaymentsHandler(() => groups.payments, { bans: bansOf('payments', paymentsNeeds) }),
    'payment-callback': createPaymentCallbackHandler(() => groups.paymentCallback, {
      bans: bansOf('payment-callback', callbackNeeds),
    }),
  };
  const call = async (
    group: string,
    method: string,
    path: string,
    options: { ip?: string; body?: object; token?: string } = {},
  ) => {
    const result = await handlers[group]!(
      apiEvent({
        method,
        path,
        ...(options.body ? { body: options.body } : {}),
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        sourceIp: options.ip ?? ADMIN_IP,
      }),
      lambdaContext,
    );
    const raw = result.isBase64Encoded
      ? Buffer.from(result.body ?? '', 'base64').toString()
      : (result.body ?? '');
    let body: { message?: string; data?: unknown } = {};
    try {
      body = JSON.parse(raw);
    } catch {}
    return { status: result.statusCode ?? 0, body, raw };
  };
  const account = await deps.accounts.repository.create({
    username: `ban_${randomBytes(4).toString('hex')}`,
    email: `ban_${randomBytes(4).toString('hex')}@example.test`,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(PASSWORD),
  });
  const login = await call('accounts', 'POST', '/admin/auth/login', {
    body: { username: account.username, password: PASSWORD },
  });
  const admin = login.body.data as { token: string };
  const ban = (body: object, ip = ADMIN_IP) =>
    call('accounts', 'POST', BANS, { body, token: admin.token, ip });
  return { clock, deps, call, ban, admin, adminId: account.id };
}

type World = Awaited<ReturnType<typeof world>>;

/** A route of each group: a health check, an /i/ rendition, a payment callback among them. */
const ROUTE_OF_EACH_GROUP: Array<[string, string, string]> = [
  ['accounts', 'POST', '/auth/login'],
  ['files', 'GET', `${API_PREFIX}/gallery`],
  ['shares', 'GET', '/s/nosuchshare'],
  ['meta', 'GET', '/healthz'],
  ['render', 'GET', '/i/2026/01/01/none.png?w=64&h=64&s=x'],
  ['payments', 'GET', `${API_PREFIX}/plans`],
  ['payment-callback', 'POST', `${API_PREFIX}/payments/mock/callback`],
];

async function refusedEverywhere(w: World, ip: string, reason: string) {
  for (const [group, method, path] of ROUTE_OF_EACH_GROUP) {
    const answer = await w.call(group, method, path, { ip, body: {} });
    expect(answer.status, `${group} ${path}`).toBe(403);
    expect(answer.body.message, group).toBe(`This address is banned: ${reason}`);
  }
}

async function servedEverywhere(w: World, ip: string) {
  for (const [group, method, path] of ROUTE_OF_EACH_GROUP) {
    const answer = await w.call(group, method, path, { ip, body: {} });
    expect(answer.raw, `${group} ${path}`).not.toContain('This address is banned');
  }
}

describe('a banned network', () => {
  it('hears 403 with the reason on a route of every group; lifting restores access', async () => {
    const w = await world();
    await servedEverywhere(w, '203.0.113.9');
    const created = await w.ban({ cidr: '203.0.113.77/24', reason: 'credential stuffing' });
    expect(created.status).toBe(201);
    const ban = created.body.data as Record<string, unknown>;
    expect(ban).toMatchObject({ cidr: '203.0.113.0/24', reason: 'credential stuffing', expires_at: null });
    expect(ban.created_by).toBe(w.adminId);
    // The accounts group enforces its own change at once; the others read the list on their next refresh.
    w.clock.advance(31_000);
    await refusedEverywhere(w, '203.0.113.9', 'credential stuffing');
    await refusedEverywhere(w, '203.0.113.254', 'credential stuffing');
    await servedEverywhere(w, '203.0.114.1');

    const listed = await w.call('accounts', 'GET', BANS, { token: w.admin.token });
    expect((listed.body.data as { items: Array<{ id: string }> }).items.map((item) => item.id)).toContain(
      ban.id,
    );

    const lifted = await w.call('accounts', 'DELETE', `${BANS}/${ban.id}`, { token: w.admin.token });
    expect(lifted.status).toBe(200);
    expect((await w.call('accounts', 'POST', '/auth/login', { ip: '203.0.113.9', body: {} })).status).toBe(
      400,
    );
    // Another group still holds its copy until its refresh (abuse.bans.refresh_seconds), then serves again.
    expect((await w.call('meta', 'GET', '/healthz', { ip: '203.0.113.9' })).status).toBe(403);
    w.clock.advance(31_000);
    await servedEverywhere(w, '203.0.113.9');
    expect((await w.call('accounts', 'DELETE', `${BANS}/${ban.id}`, { token: w.admin.token })).status).toBe(
      404,
    );
  });

  it('ends on time, even while every group still holds its copy', async () => {
    const w = await world();
    const ends = new Date(w.clock().getTime() + 60_000).toISOString();
    const created = await w.ban({ cidr: '192.0.2.0/28', reason: 'cool off', expires_at: ends });
    expect(created.status).toBe(201);
    expect((created.body.data as { expires_at: string }).expires_at).toBe(`${ends.slice(0, 19)}+00:00`);
    w.clock.advance(31_000);
    await refusedEverywhere(w, '192.0.2.3', 'cool off');
    // 29 s later the end has passed; no group has read the list again (its refresh is 30 s away).
    w.clock.advance(29_500);
    await servedEverywhere(w, '192.0.2.3');
    const listed = await w.call('accounts', 'GET', BANS, { token: w.admin.token });
    expect(JSON.stringify(listed.body.data)).not.toContain('192.0.2.0/28');
  });

  it('covers IPv6 prefixes (/64, /48) and IPv4-mapped IPv6 addresses', async () => {
    const w = await world();
    const by64 = await w.ban({ cidr: '2001:DB8:abcd:0012:1::5/64', reason: 'v6 net' });
    expect((by64.body.data as { cidr: string }).cidr).toBe('2001:db8:abcd:12::/64');
    const by48 = await w.ban({ cidr: '2001:db8:beef::/48', reason: 'v6 site' });
    expect(by48.status).toBe(201);
    const mapped = await w.ban({ cidr: '::ffff:100.100.7.7/112', reason: 'mapped' });
    expect((mapped.body.data as { cidr: string }).cidr).toBe('100.100.0.0/16');
    const v4 = await w.ban({ cidr: '100.64.1.2', reason: 'one address' });
    expect((v4.body.data as { cidr: string }).cidr).toBe('100.64.1.2/32');
    w.clock.advance(31_000);

    await refusedEverywhere(w, '2001:db8:abcd:12:ffff:ffff:ffff:1', 'v6 net');
    await refusedEverywhere(w, '2001:db8:beef:9999::1', 'v6 site');
    await refusedEverywhere(w, '::ffff:100.100.3.4', 'mapped');
    await refusedEverywhere(w, '100.100.250.1', 'mapped');
    await refusedEverywhere(w, '::ffff:100.64.1.2', 'one address');
    for (const free of ['2001:db8:abcd:13::1', '2001:db8:bef0::1', '100.64.1.3', '::ffff:100.101.0.1'])
      await servedEverywhere(w, free);
  });
});

describe('managing bans', () => {
  it('answers bad input with a 400 naming the field', async () => {
    const w = await world();
    const cases: Array<[object, RegExp]> = [
      [{ cidr: 'not-an-ip', reason: 'x' }, /^cidr:/],
      [{ cidr: '10.0.0.0/33', reason: 'x' }, /^cidr:/],
      [{ cidr: '2001:db8::/129', reason: 'x' }, /^cidr:/],
      [{ cidr: '10.0.0.1%eth0', reason: 'x' }, /^cidr:/],
      [{ cidr: '', reason: 'x' }, /^cidr:/],
      [{ reason: 'x' }, /^cidr:/],
      [{ cidr: '10.9.0.0/16' }, /^reason:/],
      [{ cidr: '10.9.0.0/16', reason: 'a\u0000b' }, /^reason:/],
      [{ cidr: '10.9.0.0/16', reason: 'r'.repeat(201) }, /^reason:/],
      [{ cidr: '10.9.0.0/16', reason: 'x', expires_at: 'tomorrow' }, /^expires_at:/],
      [{ cidr: '10.9.0.0/16', reason: 'x', expires_at: '2020-01-01T00:00:00Z' }, /^expires_at:/],
    ];
    for (const [body, message] of cases) {
      const answer = await w.ban(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.message, JSON.stringify(body)).toMatch(message);
    }
    const listed = await w.call('accounts', 'GET', BANS, { token: w.admin.token });
    expect(JSON.stringify(listed.body.data)).not.toContain('10.9.0.0');
  });

  it("refuses a ban over the administrator's own address (IPv4 or IPv6)", async () => {
    const w = await world();
    const own = await w.ban({ cidr: '198.51.100.0/24', reason: 'oops' });
    expect(own.status).toBe(400);
    expect(own.body.message).toMatch(/covers your own address/);
    const own6 = await w.ban({ cidr: '2001:db8:1::/48', reason: 'oops' }, '2001:db8:1:2::3');
    expect(own6.status).toBe(400);
    // The administrator can still reach the service.
    expect((await w.call('accounts', 'GET', BANS, { token: w.admin.token })).status).toBe(200);
  });

  it('is for administrators only: a user session is 403, no session 401', async () => {
    const w = await world();
    const user = await w.deps.accounts.repository.create({
      username: `u_${randomBytes(4).toString('hex')}`,
      email: `u_${randomBytes(4).toString('hex')}@example.test`,
      emailVerified: false,
      role: 'user',
      passwordHash: await hashPassword(PASSWORD),
    });
    const login = await w.call('accounts', 'POST', '/auth/login', {
      body: { username: user.username, password: PASSWORD },
    });
    const token = (login.body.data as { token: string }).token;
    const body = { cidr: '10.10.0.0/16', reason: 'x' };
    expect((await w.call('accounts', 'POST', BANS, { token, body })).status).toBe(403);
    expect((await w.call('accounts', 'GET', BANS, { token })).status).toBe(403);
    expect((await w.call('accounts', 'DELETE', `${BANS}/x`, { token })).status).toBe(403);
    expect((await w.call('accounts', 'POST', BANS, { body })).status).toBe(401);
  });
});
