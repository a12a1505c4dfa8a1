// An account's export and deletion (docs/ACCOUNTS.md "Export", "Deleting an account") on DynamoDB Local and
// s3rver: the account-lifecycle worker as deployed, on the test's clock. An export of 200 files is a ZIP
// whose originals hash as stored and whose JSON lists them; one export at a time; the mailed link works,
// a tampered or expired one does not; one that cannot be stored is tried again, then failed. A deletion
// needs the password (and the second factor when set), a login during the grace (password, TOTP step,
// passkey) cancels it, after it the files, renditions and shares answer 404 while the orders stay,
// anonymized, and a run that stopped halfway is finished by the next.
import { createHash } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildLifecycleDeps } from '#functions/account-lifecycle/deps.ts';
import { createLifecycleHandler } from '#functions/account-lifecycle/handler.ts';
import { needs } from '#functions/account-lifecycle/needs.ts';
import { identityKey, linkKey } from '#lib/accounts/provider-identities.ts';
import type { Mail } from '#lib/platform/mail/mailer.ts';
import { webhooksPartition } from '#lib/webhooks/endpoints.ts';
import { authHarness, createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { addPasskey, passkeyLogin } from '#test/support/passkeys.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { SoftAuthenticator } from '#test/support/webauthn.ts';
import { bucketKeys } from '../files/helpers.ts';
import { shareHarness } from '../files/share-helpers.ts';

const DAY_MS = 86_400_000;
const clock = movableClock();
const h = authHarness({ clock });
const { deps } = h;
const mail = h.mail;
const { upload, album, share, open } = shareHarness(deps, clock);
const worker = createLifecycleHandler(() =>
  buildLifecycleDeps(
    testResources('account-lifecycle', needs, { settings: deps.settings, clock, provided: { mail } }),
  ),
);
const runWorker = () => worker({ source: 'aws.events' }, lambdaContext as Context);

type Group = 'accounts' | 'files' | 'shares' | 'payments' | 'render';
// biome-ignore lint/suspicious/noExplicitAny: tests read answers of many shapes
async function call(group: Group, method: string, path: string, token?: string, body?: object): Promise<any> {
  const result = await deps.handlers[group](
    apiEvent({
      method,
      path,
      ...(body ? { body } : {}),
      headers: token ? { authorization: `Bearer ${token}` } : {},
    }),
    lambdaContext as Context,
  );
  const json = String(result.headers?.['content-type'] ?? '').includes('json');
  return {
    status: result.statusCode,
    headers: result.headers ?? {},
    body: json ? parseBody(result) : undefined,
  };
}

/** Every entry of a ZIP, read through its central directory (stored or deflated). */
function unzip(zip: Buffer): Map<string, Buffer> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const [nameLength, extraLength, commentLength] = [28, 30, 32].map((offset) =>
      zip.readUInt16LE(at + offset),
    );
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength!).toString('utf8');
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    entries.set(name, method === 0 ? Buffer.from(data) : inflateRawSync(data));
    at += 46 + nameLength! + extraLength! + commentLength!;
  }
  return entries;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const linkIn = (sent: Mail) => new URL(sent.link!);

async function storedBytes(key: string): Promise<Buffer> {
  const stored = await deps.storage.open(key);
  const chunks: Buffer[] = [];
  for await (const chunk of stored!.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An account with a session of this file's clock (createTestAccount's follows the real one). */
async function account(options: { role?: 'admin' } = {}): Promise<TestAccount> {
  const made = await createTestAccount(options);
  const { token } = await deps.sessions.issue(made.account);
  return { ...made, token, headers: { authorization: `Bearer ${token}` } };
}

beforeAll(async () => {
  await provisionTestStack();
});

describe('export', () => {
  let owner: TestAccount;
  let sent: Mail;

  beforeAll(async () => {
    owner = await account();
    for (let n = 0; n < 200; n += 20) await Promise.all(Array.from({ length: 20 }, () => upload(owner)));
  }, 120_000);

  it('answers 202 to exactly one of concurrent requests, 409 to the others', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => call('files', 'POST', '/api/v1/account/export', owner.token, {})),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409, 409, 409, 409]);
    const latest = await call('files', 'GET', '/api/v1/account/export', owner.token);
    expect(latest.body.data).toMatchObject({ state: 'pending', files: null });
  });

  it('builds a ZIP whose 200 originals hash as stored and whose JSON lists them, and mails its link', async () => {
    expect((await runWorker()).exports).toBe(1);
    const latest = await call('files', 'GET', '/api/v1/account/export', owner.token);
    expect(latest.body.data).toMatchObject({ state: 'ready', files: 200 });
    const offered = new URL(latest.body.data.download_url);
    expect((await call('files', 'GET', `${offered.pathname}${offered.search}`)).status).toBe(302);
    sent = mail.to(owner.account.email!).find((each) => each.subject === 'Your data export is ready')!;
    expect(sent.text).toContain(sent.link);
    const link = linkIn(sent);
    const answer = await call('files', 'GET', `${link.pathname}${link.search}`);
    expect(answer.status).toBe(302);
    const zip = Buffer.from(await (await fetch(answer.headers.location)).arrayBuffer());
    const entries = unzip(zip);
    const json = JSON.parse(entries.get('account.json')!.toString('utf8'));
    expect(json.account.username).toBe(owner.account.username);
    expect(json.files).toHaveLength(200);
    for (const record of json.files) {
      expect(sha256(entries.get(record.zip_path)!)).toBe(sha256(await storedBytes(record.key)));
    }
    expect(entries.size).toBe(201);
    // A second request may start once this one is ready.
    expect((await call('files', 'POST', '/api/v1/account/export', owner.token, {})).status).toBe(202);
  }, 120_000);

  it('refuses a tampered link (403) and an expired one (410)', async () => {
    const link = linkIn(sent);
    const sig = link.searchParams.get('sig')!;
    const tampered = new URL(link);
    tampered.searchParams.set('sig', `${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`);
    expect((await call('files', 'GET', `${tampered.pathname}${tampered.search}`)).status).toBe(403);
    const longer = new URL(link);
    longer.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
    expect((await call('files', 'GET', `${longer.pathname}${longer.search}`)).status).toBe(403);
    clock.advance(25 * 3_600_000);
    expect((await call('files', 'GET', `${link.pathname}${link.search}`)).status).toBe(410);
  });
});

describe('an export that cannot be stored', () => {
  it('is tried again by the next runs, then failed, and the owner may ask again', async () => {
    const owner = await account();
    await upload(owner);
    const broken = Object.assign(Object.create(deps.storage), {
      putStream: async () => {
        throw new Error('the bucket refused the upload');
      },
    });
    const failing = createLifecycleHandler(() =>
      buildLifecycleDeps(
        testResources('account-lifecycle', needs, {
          settings: deps.settings,
          clock,
          provided: { mail, bucket: broken },
        }),
      ),
    );
    expect((await call('files', 'POST', '/api/v1/account/export', owner.token, {})).status).toBe(202);
    const states: string[] = [];
    for (let run = 0; run < 3; run++) {
      await failing({}, lambdaContext as Context);
      states.push((await call('files', 'GET', '/api/v1/account/export', owner.token)).body.data.state);
    }
    expect(states).toEqual(['pending', 'pending', 'failed']);
    expect((await call('files', 'POST', '/api/v1/account/export', owner.token, {})).status).toBe(202);
  });
});

describe('deletion', () => {
  it('needs the password: a wrong one is 400 naming current_password, as a password change answers', async () => {
    const user = await account();
    const wrong = await call('accounts', 'POST', '/api/v1/account/delete', user.token, {
      current_password: 'nope-nope',
    });
    const change = await call('accounts', 'POST', '/auth/password', user.token, {
      current_password: 'nope-nope',
      new_password: 'another-good-password',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(change.body.message);
    const admin = await account({ role: 'admin' });
    const refused = await call('accounts', 'POST', '/api/v1/account/delete', admin.token, {
      current_password: admin.password,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/administrator/);
  });

  it('needs the second factor when TOTP is on', async () => {
    const user = await h.registerUser();
    const { secret } = await h.enableTotp(user);
    const ask = (code?: string) =>
      call('accounts', 'POST', '/api/v1/account/delete', user.token, {
        current_password: user.password,
        ...(code ? { code } : {}),
      });
    const missing = await ask();
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^code:/);
    expect((await ask('000000')).status).toBe(400);
    clock.advance(30_000);
    const { generate } = await import('otplib');
    const code = await generate({ secret, epoch: Math.floor(clock().getTime() / 1000) });
    const scheduled = await ask(code);
    expect(scheduled.status).toBe(202);
    // The TOTP step that completes a login cancels it (the password alone does not: no session yet).
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    const pending = await call('accounts', 'GET', '/auth/security', user.token);
    expect(pending.body.data.deletion_scheduled_for).toBe(scheduled.body.data.scheduled_for);
    clock.advance(30_000);
    const verify = await h.call('POST', '/auth/totp/verify', {
      challenge_token: login.body.data.challenge_token,
      code: await generate({ secret, epoch: Math.floor(clock().getTime() / 1000) }),
    });
    expect(verify.status).toBe(200);
    const after = await call('accounts', 'GET', '/auth/security', verify.body.data.token);
    expect(after.body.data.deletion_scheduled_for).toBeNull();
  });

  it('is cancelled by a login during the grace', async () => {
    const user = await h.registerUser();
    const scheduled = await call('accounts', 'POST', '/api/v1/account/delete', user.token, {
      current_password: user.password,
    });
    expect(scheduled.status).toBe(202);
    // Shown to the second, as every time the API answers.
    expect(
      Math.abs(Date.parse(scheduled.body.data.scheduled_for) - (clock().getTime() + 7 * DAY_MS)),
    ).toBeLessThan(1000);
    const security = await call('accounts', 'GET', '/auth/security', user.token);
    expect(security.body.data.deletion_scheduled_for).toBe(scheduled.body.data.scheduled_for);
    // The owner hears of it, whoever asked: signing in cancels it.
    const notice = mail
      .to(user.email)
      .find((each) => each.subject === 'Your account will be deleted in 7 days');
    expect(notice?.text).toContain('Signing in before then cancels it');
    clock.advance(6 * DAY_MS);
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.status).toBe(200);
    const after = await call('accounts', 'GET', '/auth/security', login.body.data.token);
    expect(after.body.data.deletion_scheduled_for).toBeNull();
    clock.advance(2 * DAY_MS);
    await runWorker();
    expect(
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).status,
    ).toBe(200);
  });

  it('is cancelled by a passkey login too', async () => {
    const user = await h.registerUser();
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);
    const scheduled = await call('accounts', 'POST', '/api/v1/account/delete', user.token, {
      current_password: user.password,
    });
    expect(scheduled.status).toBe(202);
    const login = await passkeyLogin(h, device, { username: user.username });
    expect(login.status).toBe(200);
    const after = await call('accounts', 'GET', '/auth/security', login.body.data.token);
    expect(after.body.data.deletion_scheduled_for).toBeNull();
  });

  it('deletes files, renditions and shares after the grace (404), keeping orders anonymized', async () => {
    const admin = await account({ role: 'admin' });
    const user = await account();
    const files = [await upload(user), await upload(user)];
    // One in the trash (docs/UPLOADS.md "Trash"), which no listing shows: deleted with the rest.
    const trashed = await upload(user);
    expect((await call('files', 'DELETE', `/api/v1/files/${trashed.id}`, user.token)).status).toBe(200);
    const rendition = await call('render', 'GET', `/i/${files[0]!.key}?p=thumb`);
    expect(rendition.status).toBe(200);
    const albumId = await album(user);
    const shared = await share(user, { file_id: files[1]!.id });
    const albumShare = await share(user, { album_id: albumId });
    const plan = await call('payments', 'POST', '/api/v1/admin/plans', admin.token, {
      name: 'Lifecycle plan',
      amount_cents: 100,
      quota_bytes: 1024 ** 2,
      duration_days: 30,
    });
    const order = await call('payments', 'POST', '/api/v1/orders', user.token, {
      plan_id: plan.body.data.id,
      provider: 'mock',
    });
    await call('payments', 'POST', `/api/v1/orders/${order.body.data.id}/pay`, user.token);
    // A sign-in provider's identity linked to the account, as the link flow writes it.
    const identity = identityKey('keycloak', `subject-${user.account.id}`);
    await h.table.transact([
      { Put: { Item: { ...identity, account_id: user.account.id, provider: 'keycloak' } } },
      {
        Put: {
          Item: {
            ...linkKey(user.account.id, 'keycloak'),
            provider: 'keycloak',
            subject: `subject-${user.account.id}`,
          },
        },
      },
    ]);
    // A webhook endpoint (docs/WEBHOOKS.md): removed before the files, so the purge calls it for none.
    const hook = await call('files', 'POST', '/api/v1/webhooks', user.token, {
      url: 'https://hooks.example.com/gone',
      events: ['file.deleted'],
    });
    expect(hook.status).toBe(201);
    const scheduled = await call('accounts', 'POST', '/api/v1/account/delete', user.token, {
      current_password: user.password,
    });
    expect(scheduled.status).toBe(202);

    clock.advance(6 * DAY_MS);
    await runWorker();
    expect((await call('render', 'GET', `/i/${files[0]!.key}`)).status).toBe(200);

    clock.advance(DAY_MS + 60_000);
    expect((await runWorker()).deletions).toBeGreaterThanOrEqual(1);
    for (const file of files) expect((await call('render', 'GET', `/i/${file.key}`)).status).toBe(404);
    expect(await bucketKeys(`derived/${files[0]!.key}`)).toEqual([]);
    expect(await bucketKeys(trashed.key)).toEqual([]);
    const record = await h.table.get({ pk: `file#${trashed.id}`, sk: 'file' }, { includeExpired: true });
    expect(record).toBeUndefined();
    expect(await h.table.get({ pk: `purge#${trashed.id}`, sk: 'purge' })).toBeUndefined();
    for (const each of [shared, albumShare]) expect((await open(each.id)).status).toBe(404);
    const login = await h.call('POST', '/auth/login', {
      username: user.account.username,
      password: user.password,
    });
    expect(login.status).toBe(401);
    // A session of now: the one from before the grace has expired.
    const { token } = await deps.sessions.issue(admin.account);
    const orders = await call('payments', 'GET', '/api/v1/admin/orders?limit=100', token);
    const kept = orders.body.data.items.find((each: { id: string }) => each.id === order.body.data.id);
    expect(kept).toMatchObject({ status: 'paid', username: null });
    expect(JSON.stringify(kept)).not.toContain(user.account.id);
    expect(JSON.stringify(kept)).not.toContain(user.account.username);
    // The username is free again.
    expect(await h.accounts.repository.claimOf(user.account.username)).toBeUndefined();
    // So is the provider's identity: it may sign up again.
    expect(await h.table.get(identity)).toBeUndefined();
    const hooks = await h.table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': webhooksPartition(user.account.id) },
    });
    expect(hooks.items).toEqual([]);
  });

  it('finishes next run a deletion whose run stopped halfway', async () => {
    const admin = await account({ role: 'admin' });
    const user = await account();
    const file = await upload(user);
    const plan = await call('payments', 'POST', '/api/v1/admin/plans', admin.token, {
      name: 'Resumed plan',
      amount_cents: 100,
      quota_bytes: 1024 ** 2,
      duration_days: 30,
    });
    const order = await call('payments', 'POST', '/api/v1/orders', user.token, {
      plan_id: plan.body.data.id,
      provider: 'mock',
    });
    await call('accounts', 'POST', '/api/v1/account/delete', user.token, { current_password: user.password });
    clock.advance(7 * DAY_MS + 60_000);
    // A run that stops after the files, before the orders (as a timeout or a failure would).
    const halting = buildLifecycleDeps(
      testResources('account-lifecycle', needs, { settings: deps.settings, clock, provided: { mail } }),
    );
    // biome-ignore lint/suspicious/noExplicitAny: reaching the purge's orders to make this one run stop
    (halting.worker as any).deps.purge.deps.orders.anonymize = async () => {
      throw new Error('stopped halfway');
    };
    expect((await createLifecycleHandler(() => halting)({}, lambdaContext as Context)).deletions).toBe(0);
    expect((await call('render', 'GET', `/i/${file.key}`)).status).toBe(404);
    const refused = await h.call('POST', '/auth/login', {
      username: user.account.username,
      password: user.password,
    });
    expect(refused.status).toBe(403);

    expect((await runWorker()).deletions).toBe(1);
    const { token } = await deps.sessions.issue(admin.account);
    const orders = await call('payments', 'GET', '/api/v1/admin/orders?limit=100', token);
    const kept = orders.body.data.items.find((each: { id: string }) => each.id === order.body.data.id);
    expect(kept).toMatchObject({ username: null });
    expect(await h.accounts.repository.get(user.account.id)).toBeUndefined();
  });
});
