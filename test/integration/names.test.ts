// Issue 37, finding 7: album and API token names took NUL, lone surrogates and bidi overrides (a name that
// displays `exe.png` for `gnp.exe`). Now every name a user gives refuses control characters, bidirectional
// controls and lone surrogates with a 400 naming the field, at every place a name enters; ordinary Unicode
// (accents, CJK, right-to-left scripts, emoji with joiners) passes; a file's own name is cleaned instead.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PresignResult } from '#lib/files/presign.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { type TestDeps, testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { SoftAuthenticator } from '#test/support/webauthn.ts';
import { bearer, callUpload, uploadInput } from './files/helpers.ts';

/** Bad characters as they appear in the raw JSON text a client sends (a lone surrogate has no other form). */
const REFUSED: Record<string, string> = {
  NUL: '\\u0000',
  'a C0 control (BEL)': '\\u0007',
  'a C1 control (NEL)': '\\u0085',
  DEL: '\\u007f',
  'a lone high surrogate': '\\ud800',
  'a lone low surrogate': '\\udc00',
  'RIGHT-TO-LEFT OVERRIDE': '\\u202e',
  'LEFT-TO-RIGHT EMBEDDING': '\\u202a',
  'RIGHT-TO-LEFT ISOLATE': '\\u2067',
  'POP DIRECTIONAL ISOLATE': '\\u2069',
  'RIGHT-TO-LEFT MARK': '\\u200f',
  'ARABIC LETTER MARK': '\\u061c',
};
const ORDINARY = [
  'Café crème',
  '東京の写真',
  'Ελληνικά',
  'עברית ومرحبا',
  'Family 👨‍👩‍👧 🐱',
  'naïve — résumé',
];

type Group = 'accounts' | 'files' | 'payments';
interface Sent {
  status: number;
  message: string;
}

let deps: TestDeps;
let user: TestAccount;
let admin: TestAccount;
let albumId: string;
let planId: string;

async function send(
  group: Group,
  method: string,
  path: string,
  who: TestAccount,
  json: string,
): Promise<Sent> {
  const result = await deps.handlers[group](
    apiEvent({ method, path, headers: { ...who.headers, 'content-type': 'application/json' }, body: json }),
    lambdaContext,
  );
  return { status: result.statusCode ?? 0, message: (parseBody(result) as { message: string }).message };
}

/** A real passkey registration's answer for `who` (so an ordinary name is taken). */
async function passkeyAnswer(who: TestAccount): Promise<string> {
  const result = await deps.handlers.accounts(
    apiEvent({
      method: 'POST',
      path: '/auth/passkeys/register/options',
      headers: who.headers,
      body: { password: who.password },
    }),
    lambdaContext,
  );
  expect(result.statusCode).toBe(200);
  const data = (parseBody(result) as { data: Parameters<SoftAuthenticator['register']>[0] }).data;
  return JSON.stringify(new SoftAuthenticator().register(data));
}

/**
 * Every place a user-given name enters: the route, its field, and how it is sent (`text` is the name as
 * JSON string content). `ordinary` says what an ordinary Unicode name gets: taken (2xx), or, for a coupon
 * code, the answer of a code that does not exist (codes themselves are `A-Z a-z 0-9 _ -`).
 */
const ENTRY_POINTS: Array<{
  route: string;
  field: string;
  send: (text: string) => Promise<Sent>;
  ordinary: 'taken' | 'no such coupon' | 'refused by its format';
}> = [
  {
    route: 'POST /api/v1/albums',
    field: 'name',
    send: (text) => send('files', 'POST', '/api/v1/albums', user, `{"name":"${text}"}`),
    ordinary: 'taken',
  },
  {
    route: 'PATCH /api/v1/albums/{id}',
    field: 'name',
    send: (text) => send('files', 'PATCH', `/api/v1/albums/${albumId}`, user, `{"name":"${text}"}`),
    ordinary: 'taken',
  },
  {
    route: 'POST /api/v1/tokens',
    field: 'name',
    send: (text) => send('files', 'POST', '/api/v1/tokens', user, `{"name":"${text}"}`),
    ordinary: 'taken',
  },
  {
    route: 'POST /api/v1/admin/plans',
    field: 'name',
    send: (text) =>
      send('payments', 'POST', '/api/v1/admin/plans', admin, `{"name":"${text}","amount_cents":100}`),
    ordinary: 'taken',
  },
  {
    route: 'PATCH /api/v1/admin/plans/{id}',
    field: 'name',
    send: (text) => send('payments', 'PATCH', `/api/v1/admin/plans/${planId}`, admin, `{"name":"${text}"}`),
    ordinary: 'taken',
  },
  {
    route: 'POST /auth/passkeys/register/verify',
    field: 'name',
    // An account each: registration options take the password, and password checks have a budget.
    send: async (text) => {
      const who = await createTestAccount();
      const answer = await passkeyAnswer(who);
      return send(
        'accounts',
        'POST',
        '/auth/passkeys/register/verify',
        who,
        `{"response":${answer},"name":"${text}"}`,
      );
    },
    ordinary: 'taken',
  },
  {
    route: 'POST /api/v1/admin/coupons',
    field: 'code',
    send: (text) =>
      send('payments', 'POST', '/api/v1/admin/coupons', admin, `{"code":"${text}","percent_off":10}`),
    ordinary: 'refused by its format',
  },
  {
    route: 'POST /api/v1/coupons/validate',
    field: 'code',
    send: (text) =>
      send('payments', 'POST', '/api/v1/coupons/validate', user, `{"code":"${text}","plan_id":"${planId}"}`),
    ordinary: 'no such coupon',
  },
  {
    route: 'POST /api/v1/orders',
    field: 'coupon_code',
    send: (text) =>
      send(
        'payments',
        'POST',
        '/api/v1/orders',
        user,
        `{"plan_id":"${planId}","provider":"manual","coupon_code":"${text}"}`,
      ),
    ordinary: 'no such coupon',
  },
];

beforeAll(async () => {
  await provisionTestStack();
  deps = testDeps();
  [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  const album = await send('files', 'POST', '/api/v1/albums', user, '{"name":"Holidays"}');
  const plan = await send(
    'payments',
    'POST',
    '/api/v1/admin/plans',
    admin,
    '{"name":"Named","amount_cents":100}',
  );
  expect([album.status, plan.status]).toEqual([201, 201]);
  const ids = await Promise.all([
    deps.handlers.files(apiEvent({ path: '/api/v1/albums', headers: user.headers }), lambdaContext),
    deps.handlers.payments(apiEvent({ path: '/api/v1/admin/plans', headers: admin.headers }), lambdaContext),
  ]);
  albumId = (parseBody(ids[0]) as { data: { items: Array<{ id: string }> } }).data.items[0]!.id;
  planId = (parseBody(ids[1]) as { data: Array<{ id: string }> }).data[0]!.id;
});

describe.each(ENTRY_POINTS)('$route', ({ field, send: sendName, ordinary }) => {
  it.each(Object.entries(REFUSED))(`refuses %s in ${field} with 400 naming the field`, async (_kind, bad) => {
    // Act: the character between letters, and the whole name.
    const answers = [await sendName(`Ho${bad}me`), await sendName(bad)];

    // Assess
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.message).toMatch(new RegExp(`^${field}: `));
    }
  });

  it.skipIf(ordinary === 'refused by its format')('takes ordinary Unicode names', async () => {
    for (const name of ORDINARY) {
      const answer = await sendName(JSON.stringify(name).slice(1, -1));
      if (ordinary === 'taken') expect(answer.status, `${name}: ${answer.message}`).toBeLessThan(300);
      else expect(answer, name).toEqual({ status: 400, message: 'coupon: cannot be used' });
    }
  });
});

describe("a file's own name", () => {
  it('is cleaned of the same characters, not refused (docs/UPLOADS.md), and keeps ordinary Unicode', async () => {
    // Prepare: a presign's file name as raw JSON text (NUL and a lone surrogate have no other form), and a
    // multipart name as UTF-8 bytes; three images, since the same bytes again answer the first record.
    const presigned = async (json: string, bytes: Buffer) => {
      const grant = await callUpload<PresignResult>({
        method: 'POST',
        path: '/api/v1/upload/presign',
        headers: { ...user.headers, 'content-type': 'application/json' },
        body: `{"mime_type":"image/png","size":${bytes.length},"filename":"${json}"}`,
      });
      expect(grant.status, grant.body.message).toBe(200);
      const { data } = grant.body;
      expect(
        (await fetch(data.url, { method: data.method, body: bytes, headers: data.headers })).status,
      ).toBe(200);
      return callUpload<UploadRecord>({
        method: 'POST',
        path: '/api/v1/upload/confirm',
        headers: user.headers,
        body: { key: data.key },
      });
    };
    const uploaded = (filename: string, bytes: Buffer) =>
      callUpload<UploadRecord>(uploadInput(bearer(user.token), { bytes, filename }));

    // Act
    const viaPresign = await presigned('a\\u0000b\\ud800c\\u202egnp\\u2067.png', makePng(3, 2));
    const viaUpload = await uploaded('a\u0085b\u202egnp\u200f.png', makePng(2, 3));
    const ordinary = await uploaded('東京 café 👨‍👩‍👧.png', makePng(3, 3));

    // Assess
    expect(viaPresign.body.data?.original_name, viaPresign.body.message).toBe('abcgnp.png');
    expect(viaUpload.body.data?.original_name, viaUpload.body.message).toBe('abgnp.png');
    expect(ordinary.body.data?.original_name, ordinary.body.message).toBe('東京 café 👨‍👩‍👧.png');
  });
});
