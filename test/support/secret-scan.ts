// The secret scan of the whole test suite (CONTRIBUTING.md: no secret in a response, a log line or an error
// message, the no-mail code line excepted). Every test file records every response of every group handler
// (observeResults) and every log line (tapLogging, at every level, whatever sink the test installs) as JSON
// lines under the run's scratch folder; global-setup's teardown scans them all at the end of the run and
// fails the run on any hit.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { observeResults } from '#lib/http/handler.ts';
import { API_PREFIX, matchRoute, ROUTES } from '#lib/http/routes.ts';
import { tapLogging } from '#lib/platform/log.ts';

/** What one test file submitted that is a secret: passwords and keys it sent, bearer tokens it used. */
export interface Submitted {
  kind: 'password' | 'key' | 'bearer';
  value: string;
}

export type ScanRecord =
  | {
      t: 'response';
      file: string;
      group: string;
      /** `METHOD /path` of the route table, or `METHOD rawPath` when no route matched */
      route: string;
      status: number;
      body: string;
      /** secrets in the request of a successful (2xx) call: they must never come back */
      submitted?: Submitted[];
    }
  | { t: 'log'; file: string; line: string }
  /** secrets the test file configured through the environment (static upload token, bootstrap password) */
  | { t: 'secret'; file: string; kind: Submitted['kind']; name: string; value: string };

export interface Hit {
  rule: string;
  file: string;
  /** the route of a response, or `log` */
  where: string;
  snippet: string;
}

export const SCAN_FOLDER = 'secret-scan';

// ---- known secrets of the test suite --------------------------------------------------------------------

/**
 * Passwords and keys the tests use (grep of test/**: passwords set or accepted, payment keys of the channel
 * and settings tests). Wrong passwords the tests send on purpose are not secrets and are not listed.
 */
export const KNOWN_TEST_SECRETS: readonly string[] = [
  // TEST_PASSWORD of accounts.ts (not imported: that would load the configuration before a test file sets
  // its environment; the unit test checks they agree)
  'correct horse battery',
  'a-good-password-1', // authHarness().registerUser default
  'pw-12345678',
  'e2e-password-1',
  'e2e-password-2',
  'e2e-password-3',
  'e2e-root-password', // admin bootstrap password of the e2e flows
  'bootstrap-pw-1',
  'warm-admin-pw-1',
  'change-me-admin-1',
  'admin-password-1',
  'admin2-password',
  'a-long-admin-pass',
  'second-admin-pw',
  'reset-pw-123',
  'reset-pw-456',
  'brand-new-pw',
  'race-password',
  'ses-password-1',
  'ses-e2e-password',
  // share passwords (docs/DESIGN.md 16) of the share tests and journeys
  'share-pass-1',
  'share-e2e-pass',
  'static-upload-token-for-tests-0001', // upload.api_token of static-token.test.ts
  'epay-merchant-key-abc123', // channel_c key
  'epay-merchant-key-concurrency',
  'secret-md5-key',
  '0123456789abcdef0123456789abcdef', // channel_b api_v3_key
  'abcdefghijklmnopqrstuvwxyz012345',
];

/** Environment overrides that carry secrets (docs/DESIGN.md 3): recorded per test file, then scanned for. */
const SECRET_ENV =
  /^(ADMIN__BOOTSTRAP__PASSWORD|UPLOAD__API_TOKEN|PAYMENT__\w+__(KEY|PRIVATE_KEY|API_V3_KEY))$/;

/**
 * Request body fields that carry a secret, by the route that takes it (account routes without the /api/v1
 * prefix); walked at any depth (payment settings nest them per channel). Only a successful call counts.
 */
const SECRET_BODY_FIELDS: Record<string, RegExp> = {
  'POST /auth/register': /^password$/,
  // A device token a login presents (docs/ACCOUNTS.md "Device tokens").
  'POST /auth/login': /^(password|device_token)$/,
  'POST /admin/auth/login': /^(password|device_token)$/,
  'POST /auth/totp/disable': /^password$/,
  'POST /auth/totp/setup': /^password$/,
  'POST /auth/totp/recovery-codes': /^password$/,
  // A recovery code used to log in (a TOTP code is too short to count as a literal).
  'POST /auth/totp/verify': /^code$/,
  'POST /auth/email/verify': /^password$/,
  'POST /auth/passkeys/register/options': /^password$/,
  'DELETE /auth/passkeys/{id}': /^password$/,
  'POST /auth/email/unbind': /^password$/,
  'POST /auth/password': /^(current_password|new_password)$/,
  // `token`: a reset link's.
  'POST /auth/password/reset': /^(new_password|token)$/,
  [`POST ${API_PREFIX}/admin/accounts`]: /^(password|current_password)$/,
  [`PUT ${API_PREFIX}/admin/payment`]: /^(private_key|api_v3_key|key|current_password)$/,
  [`PATCH ${API_PREFIX}/admin/accounts/{id}`]: /^current_password$/,
  [`POST ${API_PREFIX}/admin/accounts/{id}/totp/reset`]: /^current_password$/,
  // A share's password, set at creation and presented to open it (docs/DESIGN.md 16).
  [`POST ${API_PREFIX}/shares`]: /^password$/,
  [`POST ${API_PREFIX}/shares/{id}/open`]: /^password$/,
  'POST /s/{id}': /^password$/,
};

// ---- capture (runs in each test file's worker, from setup-env.ts) ----------------------------------------

const MAX_BODY_CHARS = 512 * 1024;
/** The reference page's renderer and the guides it links: published files, the same for everyone. */
const PUBLISHED_FILE_ROUTES = new Set(['GET /docs/assets/{name}', 'GET /docs/guides/{name}']);
const TEXTUAL = /json|text|html|xml|x-www-form-urlencoded/i;

function headerOf(headers: Record<string, unknown> | undefined, name: string): string {
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return '';
}

function decoded(body: string | undefined, base64: boolean | undefined, contentType: string): string {
  if (!body) return '';
  if (!base64) return body.slice(0, MAX_BODY_CHARS);
  if (!TEXTUAL.test(contentType)) return `[binary ${contentType || 'body'}]`;
  return Buffer.from(body, 'base64').toString('utf8').slice(0, MAX_BODY_CHARS);
}

function routeOf(event: ApiEvent): string {
  const method = event.requestContext?.http?.method ?? 'GET';
  if (event.routeKey && event.routeKey !== '$default') return event.routeKey;
  const match = matchRoute(method, event.rawPath ?? '');
  return match ? `${match.route.method} ${match.route.path}` : `${method} ${event.rawPath ?? ''}`;
}

const AUTHENTICATED = new Set(
  ROUTES.filter((route) => ['session', 'admin', 'uploader'].includes(route.auth)).map(
    (route) => `${route.method} ${route.path}`,
  ),
);

/**
 * Secrets a successful request carried: its bearer token where the route checked one, and the body fields
 * the route takes as secrets.
 */
export function submittedSecrets(event: ApiEvent): Submitted[] {
  const found: Submitted[] = [];
  const route = routeOf(event);
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headerOf(event.headers, 'authorization'))?.[1];
  if (bearer && AUTHENTICATED.has(route)) found.push({ kind: 'bearer', value: bearer });
  const secretField = SECRET_BODY_FIELDS[accountRoute(route)];
  if (!secretField) return found;
  const text = decoded(event.body, event.isBase64Encoded, headerOf(event.headers, 'content-type') || 'json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A page's form (the share page's password): urlencoded fields.
    if (!/=/.test(text)) return found;
    parsed = Object.fromEntries(new URLSearchParams(text));
  }
  const walk = (value: unknown, depth: number): void => {
    if (depth > 6 || value === null || typeof value !== 'object') return;
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string' && secretField.test(key)) {
        found.push({ kind: key.includes('password') ? 'password' : 'key', value: item });
      } else walk(item, depth + 1);
    }
  };
  walk(parsed, 0);
  return found;
}

export function captureFileName(testFile: string): string {
  return `${testFile.replace(/[^A-Za-z0-9_.-]+/g, '__')}.jsonl`;
}

/**
 * Records every response and every log line of this process into `<scratchDir>/secret-scan/<file>.jsonl`.
 * Returns a function that records the environment's secrets (call it once the test file has set them,
 * i.e. in a last afterAll).
 */
export function startSecretCapture(scratchDir: string, testFile: string) {
  const folder = join(scratchDir, SCAN_FOLDER);
  mkdirSync(folder, { recursive: true });
  const target = join(folder, captureFileName(testFile));
  const file = relative(process.cwd(), testFile);
  const record = (entry: ScanRecord) => appendFileSync(target, `${JSON.stringify(entry)}\n`);

  tapLogging((line) => record({ t: 'log', file, line }));
  observeResults((event: ApiEvent, result: ApiResult, group) => {
    // The reference page's renderer and the guides: the same published files for everyone, carrying no data
    // (the minified script holds alphabets that contain test keys; the guides show example passwords).
    if (PUBLISHED_FILE_ROUTES.has(routeOf(event))) return;
    const status = result.statusCode ?? 0;
    const contentType = headerOf(result.headers, 'content-type');
    record({
      t: 'response',
      file,
      group,
      route: routeOf(event),
      status,
      body: decoded(result.body, result.isBase64Encoded, contentType),
      ...(status >= 200 && status < 300 ? { submitted: submittedSecrets(event) } : {}),
    });
  });

  return function recordEnvironmentSecrets(env: NodeJS.ProcessEnv = process.env): void {
    for (const [name, value] of Object.entries(env)) {
      if (value && SECRET_ENV.test(name)) {
        record({ t: 'secret', file, kind: name.includes('PASSWORD') ? 'password' : 'key', name, value });
      }
    }
  };
}

// ---- scan (runs once at the end of the run, from global-setup.ts) ----------------------------------------

/** Route keys with the account prefix removed (docs/DESIGN.md 4 serves them at both). */
function accountRoute(route: string): string {
  return route
    .replace(` ${API_PREFIX}/auth/`, ' /auth/')
    .replace(` ${API_PREFIX}/admin/auth/`, ' /admin/auth/');
}

/**
 * The responses that show a session or challenge token by design: login and challenge (docs/SPEC.md 3.2, 5),
 * a password change, which ends every session and answers a fresh one, a password reset, which signs the
 * owner in, and a provider sign-in's ticket exchange and signup (docs/ACCOUNTS.md).
 */
const ISSUES_SESSION = new Set([
  'POST /auth/login',
  'POST /admin/auth/login',
  'POST /auth/totp/verify',
  'POST /auth/password',
  'POST /auth/password/reset',
  // Passkey logins (docs/DESIGN.md 18).
  'POST /auth/passkeys/login/verify',
  'POST /admin/auth/passkeys/login/verify',
  'POST /auth/passkeys/challenge/verify',
  // Sign-in with a provider (docs/ACCOUNTS.md): the console's ticket exchanged for the login's answer, and
  // the new account's first session.
  'POST /auth/oauth/ticket',
  'POST /auth/oauth/signup',
]);
/** The response that shows an API token, once (docs/DESIGN.md 5). */
const ISSUES_API_TOKEN = `POST ${API_PREFIX}/tokens`;
/** The response that shows a TOTP secret and its otpauth link (docs/SPEC.md 3.1). */
const ISSUES_TOTP_SECRET = 'POST /auth/totp/setup';
/** The responses that show a set of recovery codes, once (docs/DESIGN.md 10). */
const ISSUES_RECOVERY_CODES = new Set(['POST /auth/totp/enable', 'POST /auth/totp/recovery-codes']);

/** The response that shows a webhook endpoint's signing secret, once (docs/WEBHOOKS.md). */
const ISSUES_WEBHOOK_SECRET = `POST ${API_PREFIX}/webhooks`;
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9_-]{32}/g;

type Issued = 'session' | 'api' | 'totp' | 'recovery' | 'webhook';

function issues(record: Extract<ScanRecord, { t: 'response' }>, what: Issued): boolean {
  if (record.status < 200 || record.status >= 300) return false;
  const route = accountRoute(record.route);
  if (what === 'session') return ISSUES_SESSION.has(route);
  if (what === 'api') return route === ISSUES_API_TOKEN;
  if (what === 'recovery') return ISSUES_RECOVERY_CODES.has(route);
  if (what === 'webhook') return route === ISSUES_WEBHOOK_SECRET;
  return route === ISSUES_TOTP_SECRET;
}

/** The device token a login's response issued (`data.device_token`). */
function deviceTokenIn(record: Extract<ScanRecord, { t: 'response' }>): string | undefined {
  try {
    const token = (JSON.parse(record.body) as { data?: { device_token?: unknown } }).data?.device_token;
    return typeof token === 'string' && token.length >= 32 ? token : undefined;
  } catch {
    return undefined;
  }
}

/** The recovery codes an issuing response showed (`data.recovery_codes`). */
function recoveryCodesIn(record: Extract<ScanRecord, { t: 'response' }>): string[] {
  try {
    const codes = (JSON.parse(record.body) as { data?: { recovery_codes?: unknown } }).data?.recovery_codes;
    return Array.isArray(codes) ? codes.filter((code): code is string => typeof code === 'string') : [];
  } catch {
    return [];
  }
}

/** A code in every form a client may write it: as issued, without the hyphen; compared case-insensitively. */
function recoveryCodeForms(code: string): string[] {
  const lower = code.toLowerCase();
  return [lower, lower.replace('-', '')];
}

const PATTERNS: Array<{ rule: string; pattern: RegExp }> = [
  { rule: 'argon2 hash', pattern: /\$argon2(?:id|i|d)\$/ },
  // Stored recovery-code digests written out as a list (a Set serialises as {}, so a list means a copy).
  {
    rule: 'recovery code digests',
    pattern: /recovery_code_digests\\?"?\s*[:=]\s*\[\s*\\?"[A-Za-z0-9_-]{43}/,
  },
  { rule: 'PEM private key', pattern: /PRIVATE KEY/ },
  // Base64 DER of an RSA private key, PKCS#8 or PKCS#1, as the settings accept them without PEM armour.
  {
    rule: 'DER private key',
    pattern: /MII[A-Za-z0-9+/]{2,3}IBADANBgkqhkiG9w0BAQEFAASC|MII[A-Za-z0-9+/]{2,3}IBAAKC/,
  },
];
const API_TOKEN = /\but_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
/** A reset link (docs/ACCOUNTS.md "Password reset by code or link"): only ever in the mail itself. */
const RESET_LINK = /#\/reset\?token=[A-Za-z0-9_-]{20,}/;
const OTPAUTH = /otpauth:\/\/[^\s"'<>]*secret=/i;
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g;
/** A six-digit run that is not part of a longer number, word, time or path. */
const SIX_DIGITS = /(?<![0-9A-Za-z_.:/+-])\d{6}(?![0-9A-Za-z_:/-]|\.\d)/;

function jwtScope(token: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload?.scope === 'string' ? payload.scope : undefined;
  } catch {
    return undefined;
  }
}

/** A short piece of text around the match with the secret itself cut to its first 4 characters. */
export function redactedSnippet(text: string, index: number, length: number): string {
  const before = text.slice(Math.max(0, index - 40), index);
  const after = text.slice(index + length, index + length + 40);
  const secret = text.slice(index, index + length);
  return `${before}${secret.slice(0, 4)}…[${length} chars]${after}`.replace(/\s+/g, ' ');
}

/** Literals worth searching: long enough and varied enough that they do not turn up by chance. */
function worthSearching(value: string): boolean {
  return value.length >= 8 && new Set(value).size >= 4 && value.trim() === value;
}

/**
 * For long keys, a distinctive slice: a partial leak of a key is a leak too. Tokens are searched whole
 * (two sessions of one account share most of their payload).
 */
function needleOf(value: string, kind: Submitted['kind']): string {
  if (kind !== 'key' || value.length <= 64) return value;
  const middle = Math.floor(value.length / 2);
  return value.slice(middle - 16, middle + 16);
}

function sixDigitsInLog(line: string): { index: number; length: number } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    const found = SIX_DIGITS.exec(line);
    return found ? { index: found.index, length: 6 } : undefined;
  }
  // The no-mail fallback (docs/SPEC.md 4.1 rule 9) carries the code by design.
  if ((parsed as { message?: unknown })?.message === 'mail') return undefined;
  const strings: string[] = [];
  const walk = (value: unknown, depth: number, key: string): void => {
    if (depth > 8) return;
    if (typeof value === 'string') strings.push(value);
    else if (typeof value === 'number' && /code|otp/i.test(key) && /^\d{6}$/.test(String(value)))
      strings.push(String(value));
    else if (value && typeof value === 'object')
      for (const [k, item] of Object.entries(value)) walk(item, depth + 1, k);
  };
  walk(parsed, 0, '');
  for (const value of strings) {
    if (SIX_DIGITS.test(value)) {
      const index = line.indexOf(value);
      const inner = SIX_DIGITS.exec(value)!.index;
      return { index: index + inner, length: 6 };
    }
  }
  return undefined;
}

/** Scans the records of a run; pure, so it is unit-tested on synthetic input. */
export function scanRecords(records: readonly ScanRecord[]): Hit[] {
  const hits: Hit[] = [];
  const seen = new Set<string>();
  const hit = (rule: string, file: string, where: string, text: string, index: number, length: number) => {
    const key = `${rule}\u0000${file}\u0000${where}\u0000${text.slice(index, index + length)}`;
    if (seen.has(key)) return;
    seen.add(key);
    hits.push({ rule, file, where, snippet: redactedSnippet(text, index, length) });
  };

  // Secrets are looked for in the records of the file that used them (each file has its own accounts,
  // table and keys); the suite's known secrets and TOTP secrets everywhere.
  // A value counts from the record that submitted it on; a value the file's records showed before that
  // (a provider name, a MIME type sent as a "key" by a fuzzer) is vocabulary, not a secret.
  interface Literal {
    kind: Submitted['kind'];
    from: number;
  }
  const literalsByFile = new Map<string, Map<string, Literal>>();
  const learn = (file: string, value: string, kind: Submitted['kind'], from: number) => {
    const found = literalsByFile.get(file) ?? new Map<string, Literal>();
    literalsByFile.set(file, found);
    if (!found.has(value)) found.set(value, { kind, from });
  };
  const totpSecrets = new Set<string>();
  // Device tokens by file, with the position of the response that issued them.
  const deviceTokens = new Map<string, Map<string, number>>();
  // Recovery codes by file, with the position of the response that issued them.
  const recoveryCodes = new Map<string, Map<string, number>>();
  for (const [index, record] of records.entries()) {
    // Environment secrets were set before the file's first request: they count from its start.
    if (record.t === 'secret' && worthSearching(record.value)) {
      learn(record.file, needleOf(record.value, record.kind), record.kind, -1);
    }
    if (record.t !== 'response') continue;
    for (const item of record.submitted ?? []) {
      if (worthSearching(item.value)) learn(record.file, needleOf(item.value, item.kind), item.kind, index);
    }
    if (issues(record, 'recovery')) {
      const found = recoveryCodes.get(record.file) ?? new Map<string, number>();
      recoveryCodes.set(record.file, found);
      for (const code of recoveryCodesIn(record)) {
        for (const form of recoveryCodeForms(code)) if (!found.has(form)) found.set(form, index);
      }
    }
    const device = issues(record, 'session') ? deviceTokenIn(record) : undefined;
    if (device) {
      const found = deviceTokens.get(record.file) ?? new Map<string, number>();
      deviceTokens.set(record.file, found);
      if (!found.has(device)) found.set(device, index);
    }
    if (issues(record, 'totp')) {
      try {
        const secret = (JSON.parse(record.body) as { data?: { secret?: unknown } }).data?.secret;
        if (typeof secret === 'string' && secret.length >= 16) totpSecrets.add(secret);
      } catch {
        // not an envelope: nothing to learn
      }
    }
  }
  const known = new Set(KNOWN_TEST_SECRETS);

  const vocabulary = new Set<string>();
  for (const [index, record] of records.entries()) {
    if (record.t === 'secret') continue;
    const text = record.t === 'log' ? record.line : record.body;
    for (const [value, literal] of literalsByFile.get(record.file) ?? []) {
      if (index < literal.from && text.includes(value)) vocabulary.add(`${record.file}\u0000${value}`);
    }
  }

  for (const [position, record] of records.entries()) {
    if (record.t === 'secret') continue;
    const isLog = record.t === 'log';
    const text = isLog ? record.line : record.body;
    if (!text) continue;
    const where = isLog ? 'log' : `${record.route} -> ${record.status}`;

    for (const { rule, pattern } of PATTERNS) {
      const found = pattern.exec(text);
      if (found) hit(rule, record.file, where, text, found.index, found[0].length);
    }

    for (const value of known) {
      const index = text.indexOf(value);
      if (index >= 0) hit('known test secret', record.file, where, text, index, value.length);
    }
    for (const [value, { kind, from }] of literalsByFile.get(record.file) ?? []) {
      if (known.has(value) || position < from || vocabulary.has(`${record.file}\u0000${value}`)) continue;
      const index = text.indexOf(value);
      if (index < 0) continue;
      // A bearer token comes back only in the response that issued it.
      if (kind === 'bearer' && !isLog && (issues(record, 'session') || issues(record, 'api'))) continue;
      hit(
        `${kind === 'bearer' ? 'bearer token' : `submitted ${kind}`} echoed`,
        record.file,
        where,
        text,
        index,
        value.length,
      );
    }

    // A recovery code appears in the response that issued it and nowhere else: no later response, no log.
    const lowered = text.toLowerCase();
    for (const [form, issuedAt] of recoveryCodes.get(record.file) ?? []) {
      if (position === issuedAt) continue;
      const index = lowered.indexOf(form);
      if (index >= 0) hit('recovery code', record.file, where, text, index, form.length);
    }
    // A device token appears in the response that issued it and nowhere else (its use is a request).
    for (const [token, issuedAt] of deviceTokens.get(record.file) ?? []) {
      if (position === issuedAt) continue;
      const index = text.indexOf(token);
      if (index >= 0) hit('device token', record.file, where, text, index, token.length);
    }
    // A reset link goes to the owner's mailbox only: no response, no log line (the no-mail fallback too).
    const link = RESET_LINK.exec(text);
    if (link) hit('reset link', record.file, where, text, link.index, link[0].length);
    // Responses never carry the stored internals of an account (hash, sealed secrets, code digests).
    if (!isLog) {
      const internal = /password_hash|totp_secret_enc|totp_pending_enc|recovery_code_digests/.exec(text);
      if (internal) hit('account internals', record.file, where, text, internal.index, internal[0].length);
    }

    for (const secret of totpSecrets) {
      const index = text.indexOf(secret);
      if (index >= 0 && (isLog || !issues(record, 'totp')))
        hit('TOTP secret', record.file, where, text, index, secret.length);
    }
    const otpauth = OTPAUTH.exec(text);
    if (otpauth && (isLog || !issues(record, 'totp')))
      hit('otpauth link', record.file, where, text, otpauth.index, otpauth[0].length);

    for (const found of text.matchAll(WEBHOOK_SECRET)) {
      if (isLog || !issues(record, 'webhook'))
        hit('webhook secret', record.file, where, text, found.index, found[0].length);
    }
    for (const found of text.matchAll(API_TOKEN)) {
      if (isLog || !issues(record, 'api'))
        hit('API token', record.file, where, text, found.index, found[0].length);
    }

    for (const found of text.matchAll(JWT)) {
      const scope = jwtScope(found[0]);
      // Responses may carry signed links (the mock cashier's pay_url); sessions and challenges only where issued.
      const allowed = !isLog && (scope === 'mock_cashier' || issues(record, 'session'));
      if (!allowed)
        hit(
          `signed token (${scope ?? 'unknown scope'})`,
          record.file,
          where,
          text,
          found.index,
          found[0].length,
        );
    }

    if (isLog) {
      const code = sixDigitsInLog(text);
      if (code) hit('six-digit code', record.file, where, text, code.index, code.length);
    }
  }
  return hits;
}

export function readCapture(scratchDir: string): ScanRecord[] {
  const folder = join(scratchDir, SCAN_FOLDER);
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const records: ScanRecord[] = [];
  for (const name of names) {
    for (const line of readFileSync(join(folder, name), 'utf8').split('\n')) {
      if (line) records.push(JSON.parse(line) as ScanRecord);
    }
  }
  return records;
}

export function formatHits(hits: readonly Hit[]): string {
  const lines = hits.map((found) => `  [${found.rule}] ${found.file} | ${found.where} | ${found.snippet}`);
  return `Secret scan: ${hits.length} secret(s) in responses or log lines:\n${lines.join('\n')}`;
}

/** Scans what the run captured; returns the hits and how much was scanned. */
export function scanCapture(scratchDir: string): {
  hits: Hit[];
  responses: number;
  logLines: number;
  files: number;
} {
  const records = readCapture(scratchDir);
  return {
    hits: scanRecords(records),
    responses: records.filter((record) => record.t === 'response').length,
    logLines: records.filter((record) => record.t === 'log').length,
    files: new Set(records.map((record) => record.file)).size,
  };
}
