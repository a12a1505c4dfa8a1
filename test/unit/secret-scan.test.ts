// The suite's secret scan (test/support/secret-scan.ts): planted secrets are found, by-design ones are not,
// snippets never repeat a secret (test/integration/secret-capture.test.ts checks the capture feeding it).
import { describe, expect, it } from 'vitest';
import { TEST_PASSWORD } from '#test/support/accounts.ts';
import { apiEvent } from '#test/support/events.ts';
import {
  formatHits,
  KNOWN_TEST_SECRETS,
  redactedSnippet,
  type ScanRecord,
  scanRecords,
  submittedSecrets,
} from '#test/support/secret-scan.ts';

const FILE = 'test/x.test.ts';
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (scope: string, jti = 'j1') =>
  `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: 'acc-1', scope, jti, iat: 1, exp: 2 })}.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg`;
const SESSION = jwt('session');
const CASHIER = jwt('mock_cashier');
const API_TOKEN = `ut_${'A1b2C3d4E5'.repeat(4)}xyz`;
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const PASSWORD = 'my-own-Passw0rd!';
const STATIC_BEARER = 'static-bearer-token-0001';
const DEVICE_TOKEN = 'Zk3uQ9w-Lr5tYb2nVx8cPq1sDf4gHj6kMa0oEi7uWz3';
const RESET_TOKEN = 'Rq8v-Tn2bXc5mLk9pZs1dFg4hJw7yAe0uIo3tGr6eNb';
const PKCS8_DER = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7';

function response(route: string, status: number, data: unknown, extra: Partial<ScanRecord> = {}): ScanRecord {
  return {
    t: 'response',
    file: FILE,
    group: 'accounts',
    route,
    status,
    body: JSON.stringify({ code: status < 300 ? 0 : status, message: 'ok', data }),
    ...extra,
  } as ScanRecord;
}

function logLine(fields: Record<string, unknown>): ScanRecord {
  return {
    t: 'log',
    file: FILE,
    line: JSON.stringify({ level: 'info', time: '2026-11-21T08:00:00.123Z', ...fields }),
  };
}

/** What a clean run looks like: every secret only where it is shown by design. */
const CLEAN: ScanRecord[] = [
  response('POST /auth/login', 200, { token: SESSION, token_type: 'Bearer', device_token: DEVICE_TOKEN }, {
    submitted: [{ kind: 'password', value: PASSWORD }],
  } as Partial<ScanRecord>),
  response('POST /auth/password/reset', 200, null, {
    submitted: [{ kind: 'key', value: RESET_TOKEN }],
  } as Partial<ScanRecord>),
  response('POST /api/v1/auth/totp/verify', 200, { token: SESSION }),
  response('POST /auth/totp/setup', 200, {
    secret: TOTP_SECRET,
    uri: `otpauth://totp/svc:alice?secret=${TOTP_SECRET}&issuer=svc`,
  }),
  response('POST /api/v1/tokens', 201, { id: 't1', token: API_TOKEN, prefix: 'ut_A1b2C' }),
  response('POST /api/v1/orders', 201, { pay_url: `http://localhost:3000/pay/mock/o1?token=${CASHIER}` }),
  response('GET /api/v1/tokens', 200, [{ id: 't1', prefix: 'ut_A1b2C' }], {
    submitted: [{ kind: 'bearer', value: STATIC_BEARER }],
  } as Partial<ScanRecord>),
  logLine({
    message: 'mail',
    to: 'a@example.test',
    subject: 'Your code',
    code: '123456',
    text: 'code 123456',
  }),
  logLine({
    message: 'payment callback amount differs from the order',
    request_id: '0b9c6f1e-2d3a-4c5b-8e7f-9a0b1c2d3e4f',
    order_amount_cents: 123456,
    trade_no: '2024010122001400000000000001',
    error: { stack: 'Error: x\n    at run (file:///work/main/lib/a.ts:120:17)' },
  }),
];

describe('the secret scan', () => {
  it('finds nothing in a run where secrets appear only where they are shown by design', () => {
    expect(scanRecords(CLEAN)).toEqual([]);
  });

  const planted: Array<[string, ScanRecord, string]> = [
    [
      'an argon2 hash in a response',
      response('GET /auth/me', 200, { h: '$argon2id$v=19$m=19456' }),
      'argon2',
    ],
    [
      'a PEM private key in a log line',
      logLine({ message: 'x', k: '-----BEGIN PRIVATE KEY-----\nMIIE' }),
      'PEM',
    ],
    ['a DER private key in a response', response('GET /api/v1/admin/payment', 200, { k: PKCS8_DER }), 'DER'],
    [
      'a known test password in a log line',
      logLine({ message: 'login', attempt: TEST_PASSWORD }),
      'known test secret',
    ],
    [
      'a submitted password in a later response',
      response('GET /auth/me', 200, { note: PASSWORD }),
      'submitted',
    ],
    ['a used bearer token in a log line', logLine({ message: 'auth', header: STATIC_BEARER }), 'bearer'],
    [
      'an API token outside its create response',
      response('GET /api/v1/tokens', 200, [API_TOKEN]),
      'API token',
    ],
    ['an API token in a log line', logLine({ message: 'token', t: API_TOKEN }), 'API token'],
    ['the TOTP secret outside setup', response('GET /auth/security', 200, { s: TOTP_SECRET }), 'TOTP'],
    ['the TOTP secret in a log line', logLine({ message: 'totp', s: TOTP_SECRET }), 'TOTP'],
    [
      'an otpauth link outside setup',
      response('GET /auth/me', 200, { u: 'otpauth://totp/a?secret=ABC' }),
      'otpauth',
    ],
    ['a session token in a log line', logLine({ message: 'x', t: jwt('session', 'j2') }), 'session'],
    ['a cashier link in a log line', logLine({ message: 'x', t: CASHIER }), 'mock_cashier'],
    [
      'a session token outside login',
      response('GET /api/v1/files', 200, { t: jwt('session', 'j3') }),
      'session',
    ],
    [
      'a challenge token outside login',
      response('GET /auth/me', 200, { t: jwt('totp_challenge') }),
      'totp_challenge',
    ],
    [
      'a code in a log line other than the mail line',
      logLine({ message: 'sent', text: 'code 654321' }),
      'six-digit',
    ],
    ['a numeric code field in a log line', logLine({ message: 'sent', code: 654321 }), 'six-digit'],
    [
      'a device token outside the login that issued it',
      response('GET /auth/sessions', 200, { d: DEVICE_TOKEN }),
      'device token',
    ],
    ['a device token in a log line', logLine({ message: 'login', d: DEVICE_TOKEN }), 'device token'],
    [
      'a reset link in the no-mail log line',
      logLine({
        message: 'mail',
        to: 'a@example.test',
        text: 'open http://h/#/reset?token=aBcDeFgHiJkLmNoPqRsTuVwXyZ',
      }),
      'reset link',
    ],
    [
      'a reset link in a response',
      response('POST /auth/password/reset/code', 200, {
        u: 'http://h/#/reset?token=aBcDeFgHiJkLmNoPqRsTuVwXyZ',
      }),
      'reset link',
    ],
    [
      "a used reset link's token in a later log line",
      logLine({ message: 'reset', t: RESET_TOKEN }),
      'submitted key',
    ],
    [
      'a secret the file set through the environment',
      logLine({ message: 'cfg', value: 'env-static-token-XYZ' }),
      'submitted key',
    ],
  ];
  it.each(planted)('catches %s', (_name, record, rule) => {
    // Prepare
    const records: ScanRecord[] = [
      ...CLEAN,
      { t: 'secret', file: FILE, kind: 'key', name: 'UPLOAD__API_TOKEN', value: 'env-static-token-XYZ' },
      record,
    ];

    // Act
    const hits = scanRecords(records);

    // Assess
    expect(hits).toHaveLength(1);
    expect(hits[0]!.rule).toContain(rule);
    expect(hits[0]!.file).toBe(FILE);
    expect(hits[0]!.where).toBe(record.t === 'log' ? 'log' : `${(record as { route: string }).route} -> 200`);
    for (const secret of [
      SESSION,
      API_TOKEN,
      TOTP_SECRET,
      PASSWORD,
      TEST_PASSWORD,
      STATIC_BEARER,
      DEVICE_TOKEN,
      RESET_TOKEN,
    ])
      expect(formatHits(hits)).not.toContain(secret);
  });

  it('lets a bearer token come back only in the response that issues one', () => {
    const echoed = response('POST /auth/logout', 200, { t: STATIC_BEARER }, {
      submitted: [{ kind: 'bearer', value: STATIC_BEARER }],
    } as Partial<ScanRecord>);
    const issued = response('POST /auth/login', 200, { t: STATIC_BEARER }, {
      submitted: [{ kind: 'bearer', value: STATIC_BEARER }],
    } as Partial<ScanRecord>);
    expect(scanRecords([echoed]).map((hit) => hit.rule)).toEqual(['bearer token echoed']);
    expect(scanRecords([issued])).toEqual([]);
  });

  it('does not take an error response for an issuing one', () => {
    const failed = response('POST /auth/totp/setup', 400, {
      secret: TOTP_SECRET,
      uri: 'otpauth://x?secret=A',
    });
    expect(scanRecords([...CLEAN, failed]).map((hit) => hit.rule)).toEqual(['TOTP secret', 'otpauth link']);
  });

  it('knows the password createTestAccount uses', () => {
    expect(KNOWN_TEST_SECRETS).toContain(TEST_PASSWORD);
  });

  it('cuts the secret out of the snippet', () => {
    const text = `before the secret ${SESSION} and after`;
    const snippet = redactedSnippet(text, text.indexOf(SESSION), SESSION.length);
    expect(snippet).toBe(`before the secret eyJh…[${SESSION.length} chars] and after`);
  });
});

describe('share passwords in the secret scan (docs/DESIGN.md 16)', () => {
  const event = (method: string, path: string, body: string, contentType: string) =>
    apiEvent({ method, path, body, headers: { 'content-type': contentType } });

  it('takes the password a share is created or opened with as a secret, JSON or the page form', () => {
    const created = submittedSecrets(
      event(
        'POST',
        '/api/v1/shares',
        JSON.stringify({ file_id: 'f', password: 'share-secret-9' }),
        'application/json',
      ),
    );
    const opened = submittedSecrets(
      event(
        'POST',
        '/api/v1/shares/abc/open',
        JSON.stringify({ password: 'share-secret-9' }),
        'application/json',
      ),
    );
    const form = submittedSecrets(
      event('POST', '/s/abc', 'password=share-secret-9', 'application/x-www-form-urlencoded'),
    );

    for (const found of [created, opened, form]) {
      expect(found).toContainEqual({ kind: 'password', value: 'share-secret-9' });
    }
  });
});
