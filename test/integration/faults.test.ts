// DynamoDB and S3 failures (throttling, timeouts, an unclassified error) injected at each step of every
// multi-step operation: registration, direct upload, confirm, order creation, settlement, settings save. After each: a
// clean error (503 + Retry-After for throttling and timeouts, the generic 500 otherwise, never internals),
// no partial record, no orphan object, and the same request retried succeeds with exactly one effect.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codeKey } from '#lib/accounts/codes.ts';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import { logPublisher } from '#lib/billing/order-events.ts';
import { orderKey } from '#lib/billing/orders.ts';
import { outboxKey } from '#lib/billing/outbox.ts';
import { SETTINGS_KEY, SETTINGS_VERSION_KEY } from '#lib/billing/settings.ts';
import { fileKey } from '#lib/files/files.ts';
import { pendingKey } from '#lib/files/pending.ts';
import { incomingKey, trashKey } from '#lib/files/prefixes.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { usageKey } from '#lib/files/usage.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { configureLogging } from '#lib/platform/log.ts';
import {
  call as callPayments,
  deliverCallback,
  type LogLine,
  paidEvents,
} from '#test/integration/billing/helpers.ts';
import { callUpload, presignedUpload, uniquePng, uploadInput } from '#test/integration/files/helpers.ts';
import { noisePng, usageMatchesRecords } from '#test/integration/files/quota-helpers.ts';
import { authHarness, createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { buildEpayNotify, epayNotifyFields } from '#test/support/fake-gateways/index.ts';
import {
  clearFaults,
  FAULT_KINDS,
  type FaultKind,
  type FaultOptions,
  failNext,
  faultError,
  findOrphans,
  INJECTED_MARKER,
  listBucket,
  mentions,
  scanTable,
} from '#test/support/faults.ts';
import { makePng } from '#test/support/images.ts';
import { drainOutbox } from '#test/support/outbox.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const C_PID = '1001';
const C_KEY = 'epay-merchant-key-faults';

const lines: LogLine[] = [];
configureLogging({ level: 'info', sink: (line) => lines.push(JSON.parse(line) as LogLine) });

let table: Table;
let admin: TestAccount;
let planId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  admin = await createTestAccount({ role: 'admin' });
  const saved = await callPayments('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    body: {
      channel_c: { enabled: true, pid: C_PID, key: C_KEY, gateway_url: 'https://pay.example.test/' },
      current_password: admin.password,
    },
  });
  expect(saved.status).toBe(200);
  const plan = await callPayments('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Faults plan', amount_cents: 1230 },
  });
  planId = plan.json.data.id;
});

afterEach(() => {
  clearFaults();
});

let n = 0;
const unique = (label: string) => `${label}${Date.now().toString(36)}${n++}`;

const dynamo = (options: FaultOptions) => failNext(dynamoClient(config.aws) as never, options);
const s3 = (options: FaultOptions) => failNext(s3Client(config.aws) as never, options);

/** The answer to an injected failure: 503 + Retry-After when a retry may help, else the generic 500. */
function expectCleanFailure(
  kind: FaultKind,
  answer: { status: number; headers: Record<string, string>; raw: string },
) {
  expect(answer.raw).not.toContain(INJECTED_MARKER);
  expect(answer.raw).not.toMatch(/Exception|TimeoutError|InternalError|stack|\bat \w/);
  const body = JSON.parse(answer.raw);
  if (kind === 'generic') {
    expect(answer.status).toBe(500);
    expect(body).toEqual({ code: 500, message: 'Internal server error', data: null });
  } else {
    expect(answer.status).toBe(503);
    expect(body).toEqual({
      code: 503,
      message: 'Service is busy; try again shortly',
      data: { retry_after: 1 },
    });
    expect(answer.headers['retry-after']).toBe('1');
  }
}

async function expectNoOrphans() {
  expect(await findOrphans()).toEqual([]);
}

// ---- registration: claims read, code attempt, account transaction (claims + code consumption) ------

describe('registration under faults', () => {
  const steps: Array<{ step: string; fault: Omit<FaultOptions, 'error'> }> = [
    { step: 'identifier look-up', fault: { command: 'GetItemCommand', when: mentions('ident#') } },
    { step: 'code attempt', fault: { command: 'UpdateItemCommand', when: mentions('code#register#') } },
    { step: 'account transaction', fault: { command: 'TransactWriteItemsCommand' } },
  ];
  for (const { step, fault } of steps) {
    for (const kind of FAULT_KINDS) {
      it(`${step} fails (${kind}): clean error, no account, claim or spent code; the retry registers once`, async () => {
        // Prepare
        const h = authHarness();
        const username = unique('flt_');
        const email = `${username}@example.test`;
        await h.call('POST', '/auth/register/code', { email });
        const body = { username, email, code: h.mail.codeFor(email), password: 'pw-12345678' };
        const injected = dynamo({ ...fault, error: kind });

        // Act
        const failed = await h.call('POST', '/auth/register', body);
        const retried = await h.call('POST', '/auth/register', body);

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, failed);
        expect(retried.status).toBe(201);
        const accounts = (await scanTable()).filter(
          (item) => item.pk.startsWith('account#') && item.username === username,
        );
        expect(accounts).toHaveLength(1);
        expect((await h.table.get(identifierKey(email)))?.account_id).toBe(accounts[0]!.id);
        expect(await h.table.get(codeKey('register', email))).toBeUndefined();
        await expectNoOrphans();
      });
    }
  }

  it('leaves nothing behind when the account transaction fails: no account, no claims, the code still usable', async () => {
    // Prepare
    const h = authHarness();
    const username = unique('flt_');
    const email = `${username}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    dynamo({ command: 'TransactWriteItemsCommand', error: 'throttling' });

    // Act
    const failed = await h.call('POST', '/auth/register', {
      username,
      email,
      code: h.mail.codeFor(email),
      password: 'pw-12345678',
    });

    // Assess
    expect(failed.status).toBe(503);
    expect(await h.table.get(identifierKey(username))).toBeUndefined();
    expect(await h.table.get(identifierKey(email))).toBeUndefined();
    expect(
      (await scanTable()).filter((item) => item.pk.startsWith('account#') && item.username === username),
    ).toEqual([]);
    // One attempt spent, the code itself not consumed.
    expect(await h.table.get(codeKey('register', email))).toMatchObject({ attempts: 1 });
  });
});

// ---- direct upload: dedupe look-up, PutObject, record transaction (before and after the bytes) --------

describe('direct upload under faults', () => {
  const steps: Array<{
    step: string;
    permission: 'private' | 'public';
    fault: Omit<FaultOptions, 'error'>;
    s3?: true;
  }> = [
    {
      step: 'dedupe look-up',
      permission: 'private',
      fault: { command: 'GetItemCommand', when: mentions('filehash#') },
    },
    {
      step: 'PutObject (private: the record was written meanwhile)',
      permission: 'private',
      fault: { command: 'PutObjectCommand' },
      s3: true,
    },
    { step: 'PutObject (public)', permission: 'public', fault: { command: 'PutObjectCommand' }, s3: true },
    {
      step: 'record transaction (private)',
      permission: 'private',
      fault: { command: 'TransactWriteItemsCommand' },
    },
    {
      step: 'record transaction after the bytes were stored (public)',
      permission: 'public',
      fault: { command: 'TransactWriteItemsCommand' },
    },
  ];
  for (const { step, permission, fault, s3: onS3 } of steps) {
    for (const kind of FAULT_KINDS) {
      it(`${step} fails (${kind}): clean error, no record, no object; the retry stores one`, async () => {
        // Prepare
        const owner = await createTestAccount();
        const { bytes } = uniquePng(makePng);
        const input = uploadInput(owner.headers, { bytes }, [{ name: 'permission', data: permission }]);
        const before = new Set(await listBucket());
        const injected = onS3 ? s3({ ...fault, error: kind }) : dynamo({ ...fault, error: kind });

        // Act
        const failed = await callUpload(input);
        const afterFailure = await ownState(owner, before);
        const retried = await callUpload<UploadRecord>(input);

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, {
          status: failed.status,
          headers: failed.headers,
          raw: JSON.stringify(failed.body),
        });
        expect(afterFailure).toEqual({ records: 0, claims: 0, objects: [] });
        expect(retried.status).toBe(200);
        expect(await ownState(owner, before)).toEqual({
          records: 1,
          claims: 1,
          objects: [retried.body.data.key],
        });
        await expectNoOrphans();
      });
    }
  }
});

async function ownState(owner: TestAccount, before: Set<string>) {
  const items = (await scanTable()).filter((item) => item.owner_id === owner.account.id);
  return {
    records: items.filter((item) => item.pk.startsWith('file#')).length,
    claims: items.filter((item) => item.pk.startsWith('filehash#')).length,
    objects: (await listBucket()).filter((key) => !before.has(key)),
  };
}

// ---- confirm: look-ups (record and grant; usage), read object, copy and record transaction together -----

describe('upload confirm under faults', () => {
  const confirm = (owner: TestAccount, key: string) =>
    callUpload<UploadRecord>({
      method: 'POST',
      path: '/api/v1/upload/confirm',
      body: { key },
      headers: owner.headers,
    });

  const steps: Array<{
    step: string;
    permission?: 'public';
    fault: Omit<FaultOptions, 'error'>;
    s3?: true;
  }> = [
    {
      step: 'record and grant look-up',
      fault: { command: 'BatchGetItemCommand', when: mentions('pending#') },
    },
    { step: 'usage read', fault: { command: 'QueryCommand', when: mentions('usage#') } },
    { step: 'object read', fault: { command: 'GetObjectCommand' }, s3: true },
    { step: 'copy (the record written meanwhile)', fault: { command: 'CopyObjectCommand' }, s3: true },
    { step: 'record transaction (beside the copy)', fault: { command: 'TransactWriteItemsCommand' } },
    { step: 'copy (public)', permission: 'public', fault: { command: 'CopyObjectCommand' }, s3: true },
    {
      step: 'record transaction after the copy (public)',
      permission: 'public',
      fault: { command: 'TransactWriteItemsCommand' },
    },
  ];
  for (const { step, permission, fault, s3: onS3 } of steps) {
    for (const kind of FAULT_KINDS) {
      it(`${step} fails (${kind}): clean error, the grant still open, no copy, usage unchanged; the retry confirms once`, async () => {
        // Prepare
        const owner = await createTestAccount();
        const key = await presignedUpload(owner.headers, permission);
        const injected = onS3 ? s3({ ...fault, error: kind }) : dynamo({ ...fault, error: kind });

        // Act
        const failed = await confirm(owner, key);
        const objectsAfterFailure = await listBucket();
        const grantAfterFailure = await table.get(pendingKey(key));
        const usageAfterFailure = await table.get(usageKey(owner.account.id));
        const retried = await confirm(owner, key);

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, {
          status: failed.status,
          headers: failed.headers,
          raw: JSON.stringify(failed.body),
        });
        expect(objectsAfterFailure).toContain(incomingKey(key));
        expect(objectsAfterFailure).not.toContain(key);
        expect(grantAfterFailure?.confirmed_file_id).toBeUndefined();
        expect(usageAfterFailure?.used_bytes ?? 0).toBe(0);
        expect(retried.status).toBe(200);
        expect(retried.body.data.key).toBe(key);
        expect(await listBucket()).toContain(key);
        const records = (await scanTable()).filter(
          (item) => item.pk.startsWith('file#') && item.owner_id === owner.account.id,
        );
        expect(records).toHaveLength(1);
        expect(await table.get(usageKey(owner.account.id))).toMatchObject({
          used_bytes: retried.body.data.size,
          file_count: 1,
        });
        await expectNoOrphans();
      });
    }
  }

  it('sends no delete of the incoming object: it is left to the bucket lifecycle rule, and a repeat confirm answers the record', async () => {
    // Prepare
    const owner = await createTestAccount();
    const key = await presignedUpload(owner.headers);
    const deletes = s3({ command: 'DeleteObjectCommand', error: 'generic' });

    // Act
    const confirmed = await confirm(owner, key);
    const again = await confirm(owner, key);

    // Assess
    expect(confirmed.status).toBe(200);
    expect(deletes.seen).toBe(0);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(confirmed.body.data);
    await expectNoOrphans();
  });
});

// ---- order creation: one write (the order whole) -----------------------------------------------------

describe('order creation under faults', () => {
  for (const provider of ['mock', 'channel_c']) {
    for (const kind of FAULT_KINDS) {
      it(`the order's write fails (${kind}, ${provider}): clean error, no order; the retry places one`, async () => {
        // Prepare
        const buyer = await createTestAccount();
        const place = () =>
          callPayments('POST', '/api/v1/orders', {
            headers: buyer.headers,
            body: { plan_id: planId, provider },
          });
        const injected = dynamo({
          command: 'PutItemCommand',
          when: mentions('order#'),
          error: kind,
        });
        const listed = async () =>
          (await callPayments('GET', '/api/v1/orders', { headers: buyer.headers })).json.data.items as Array<{
            id: string;
          }>;

        // Act
        const failed = await place();
        const afterFailure = await listed();
        const retried = await place();

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, { status: failed.status, headers: failed.headers, raw: failed.text });
        expect(afterFailure).toEqual([]);
        expect(retried.status).toBe(201);
        expect((await listed()).map((order) => order.id)).toEqual([retried.json.data.id]);
        expect(await table.get(orderKey(retried.json.data.id))).toMatchObject({ status: 'pending' });
      });
    }
  }
});

// ---- settlement: order read, the settlement transaction (with the outbox event), the outbox drain --------

describe('callback settlement under faults', () => {
  async function pendingOrder() {
    const buyer = await createTestAccount();
    const order = await callPayments('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'channel_c' },
    });
    expect(order.status).toBe(201);
    const orderId = order.json.data.id as string;
    const notification = buildEpayNotify({
      key: C_KEY,
      fields: epayNotifyFields({
        pid: C_PID,
        out_trade_no: orderId,
        money: '12.30',
        trade_no: `T${orderId}`,
      }),
    });
    return { orderId, notification };
  }

  // The payment settings are cached per container (docs/PAYMENTS-GUIDE.md, "Hot reload"): a warm callback
  // does not read them, so their read failing is the cold container's case, in
  // test/integration/billing/caches.test.ts.
  const steps: Array<{ step: string; fault: Omit<FaultOptions, 'error'> }> = [
    { step: 'order read', fault: { command: 'GetItemCommand', when: mentions('order#') } },
    {
      step: 'settlement transaction',
      fault: { command: 'TransactWriteItemsCommand', when: mentions('order#') },
    },
  ];
  for (const { step, fault } of steps) {
    for (const kind of FAULT_KINDS) {
      it(`${step} fails (${kind}): clean error, order still pending, no event; the redelivery settles once`, async () => {
        // Prepare
        const { orderId, notification } = await pendingOrder();
        const injected = dynamo({ ...fault, error: kind });

        // Act
        const failed = await deliverCallback('channel_c', notification);
        const afterFailure = await table.get(orderKey(orderId));
        const eventsAfterFailure = await paidEvents(lines, orderId);
        const redelivered = await deliverCallback('channel_c', notification);

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, { status: failed.status, headers: failed.headers, raw: failed.text });
        expect(afterFailure).toMatchObject({ status: 'pending' });
        expect(afterFailure?.paid_at).toBeUndefined();
        expect(eventsAfterFailure).toBe(0);
        expect(redelivered.status).toBe(200);
        expect(redelivered.text).toBe('success');
        expect(await table.get(orderKey(orderId))).toMatchObject({ status: 'paid', trade_no: `T${orderId}` });
        expect(await paidEvents(lines, orderId)).toBe(1);
        await expectNoOrphans();
      });
    }
  }

  for (const kind of FAULT_KINDS) {
    it(`the outbox drain's write fails (${kind}): paid once, acknowledged; the drain's retry publishes once`, async () => {
      // Prepare: the drain's first write to the event (its claim) fails; the stream retries the record.
      const { orderId, notification } = await pendingOrder();
      const paid = await deliverCallback('channel_c', notification);
      const injected = dynamo({
        command: 'UpdateItemCommand',
        when: mentions(`OUTBOX#${orderId}`),
        error: kind,
      });

      // Act
      const drained = await drainOutbox();
      const redelivered = await deliverCallback('channel_c', notification);

      // Assess
      expect(paid.text).toBe('success');
      expect(injected.failed).toBe(1);
      expect(drained.failedInvocations).toBeGreaterThanOrEqual(1);
      expect(drained.givenUp).toBe(0);
      expect(redelivered.text).toBe('success');
      expect(await table.get(orderKey(orderId))).toMatchObject({ status: 'paid' });
      expect(await paidEvents(lines, orderId)).toBe(1);
      expect(await table.get(outboxKey(orderId))).toMatchObject({ delivered_at: expect.any(String) });
      await expectNoOrphans();
    });
  }

  it('publishing order.paid fails: paid once and acknowledged; the outbox drain retries and publishes it once', async () => {
    // Prepare: the bus (here the log publisher, as locally) refuses this order's event twice.
    const { orderId, notification } = await pendingOrder();
    const original = logPublisher.orderPaid;
    let refusals = 2;
    logPublisher.orderPaid = async (detail) => {
      if (detail.order_id === orderId && refusals > 0) {
        refusals -= 1;
        throw faultError('throttling', 'EventBridge');
      }
      return original(detail);
    };

    // Act
    let first: Awaited<ReturnType<typeof deliverCallback>>;
    let soon: Awaited<ReturnType<typeof deliverCallback>>;
    let drained: Awaited<ReturnType<typeof drainOutbox>>;
    try {
      first = await deliverCallback('channel_c', notification);
      soon = await deliverCallback('channel_c', notification);
      drained = await drainOutbox();
    } finally {
      logPublisher.orderPaid = original;
    }

    // Assess
    expect(first.status).toBe(200);
    expect(soon.text).toBe('success');
    expect(refusals).toBe(0);
    expect(drained.failedInvocations).toBeGreaterThanOrEqual(2);
    expect(drained.givenUp).toBe(0);
    expect(await paidEvents(lines, orderId)).toBe(1);
    expect(await table.get(outboxKey(orderId))).toMatchObject({
      delivered_at: expect.any(String),
      attempts: 3,
    });
  });
});

// ---- settings save: version read, one transaction of settings + version ----------------------------------

describe('payment settings save under faults', () => {
  const steps: Array<{ step: string; fault: Omit<FaultOptions, 'error'> }> = [
    { step: 'version read', fault: { command: 'GetItemCommand', when: mentions('settings#payment') } },
    { step: 'settings transaction', fault: { command: 'TransactWriteItemsCommand' } },
  ];
  for (const { step, fault } of steps) {
    for (const kind of FAULT_KINDS) {
      it(`${step} fails (${kind}): clean error, settings and version unchanged; the retry saves once`, async () => {
        // Prepare
        const before = await callPayments('GET', '/api/v1/admin/payment', { headers: admin.headers });
        const versionBefore = (await table.get(SETTINGS_VERSION_KEY))?.version as number;
        const payType = unique('pt');
        const body = { channel_c: { pay_type: payType } };
        const injected = dynamo({ ...fault, error: kind });

        // Act
        const failed = await callPayments('PUT', '/api/v1/admin/payment', { headers: admin.headers, body });
        const unchanged = await callPayments('GET', '/api/v1/admin/payment', { headers: admin.headers });
        const versionAfterFailure = (await table.get(SETTINGS_VERSION_KEY))?.version;
        const retried = await callPayments('PUT', '/api/v1/admin/payment', { headers: admin.headers, body });

        // Assess
        expect(injected.failed).toBe(1);
        expectCleanFailure(kind, { status: failed.status, headers: failed.headers, raw: failed.text });
        expect(unchanged.json.data).toEqual(before.json.data);
        expect(versionAfterFailure).toBe(versionBefore);
        expect(retried.status).toBe(200);
        expect(retried.json.data.channel_c.pay_type).toBe(payType);
        expect((await table.get(SETTINGS_VERSION_KEY))?.version).toBe(versionBefore + 1);
        expect((await table.get(SETTINGS_KEY))?.version).toBe(versionBefore + 1);
        await expectNoOrphans();
      });
    }
  }
});

// ---- storage quotas (docs/DESIGN.md 11): the usage moves in the same transaction as the record, or not at all ----

describe('storage quota under faults', () => {
  const usageOf = async (owner: TestAccount) => {
    const item = await table.get(usageKey(owner.account.id));
    return { used_bytes: item?.used_bytes ?? 0, file_count: item?.file_count ?? 0 };
  };

  async function quotaPlan() {
    const plan = await callPayments('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: unique('Faults quota '), amount_cents: 1230, quota_bytes: 80_000, duration_days: 30 },
    });
    return plan.json.data.id as string;
  }

  for (const kind of FAULT_KINDS) {
    it(`the upload transaction fails (${kind}): usage unchanged, nothing stored; the retry counts it once`, async () => {
      // Prepare: an owner with one file counted already.
      const owner = await createTestAccount();
      const kept = await callUpload<UploadRecord>(uploadInput(owner.headers, { bytes: noisePng(1200) }));
      const before = await usageOf(owner);
      const input = uploadInput(owner.headers, { bytes: noisePng(900) });
      const injected = dynamo({ command: 'TransactWriteItemsCommand', error: kind });

      // Act
      const failed = await callUpload(input);
      const afterFailure = await usageOf(owner);
      const retried = await callUpload<UploadRecord>(input);

      // Assess
      expect(injected.failed).toBe(1);
      expectCleanFailure(kind, {
        status: failed.status,
        headers: failed.headers,
        raw: JSON.stringify(failed.body),
      });
      expect(afterFailure).toEqual(before);
      expect(retried.status).toBe(200);
      expect(await usageOf(owner)).toEqual({
        used_bytes: kept.body.data.size + retried.body.data.size,
        file_count: 2,
      });
      expect(await usageMatchesRecords(table, owner.account.id)).toMatchObject({ record_count: 2 });
      await expectNoOrphans();
    });

    it(`the confirm transaction fails (${kind}): usage unchanged; the retry counts it once`, async () => {
      // Prepare
      const owner = await createTestAccount();
      const key = await presignedUpload(owner.headers);
      const injected = dynamo({ command: 'TransactWriteItemsCommand', error: kind });
      const confirm = () =>
        callUpload<UploadRecord>({
          method: 'POST',
          path: '/api/v1/upload/confirm',
          body: { key },
          headers: owner.headers,
        });

      // Act
      const failed = await confirm();
      const afterFailure = await usageOf(owner);
      const retried = await confirm();

      // Assess
      expect(injected.failed).toBe(1);
      expectCleanFailure(kind, {
        status: failed.status,
        headers: failed.headers,
        raw: JSON.stringify(failed.body),
      });
      expect(afterFailure).toEqual({ used_bytes: 0, file_count: 0 });
      expect(retried.status).toBe(200);
      expect(await usageOf(owner)).toEqual({ used_bytes: retried.body.data.size, file_count: 1 });
      await expectNoOrphans();
    });

    it(`the delete transaction fails (${kind}): record, object and usage unchanged; the retry gives the bytes back`, async () => {
      // Prepare
      const owner = await createTestAccount();
      const stored = await callUpload<UploadRecord>(uploadInput(owner.headers, { bytes: noisePng(1000) }));
      // In the trash first (still counted; docs/UPLOADS.md "Trash"): the delete for good is the one that fails.
      await callUpload({
        method: 'DELETE',
        path: `/api/v1/files/${stored.body.data.id}`,
        headers: owner.headers,
      });
      const injected = dynamo({ command: 'TransactWriteItemsCommand', error: kind });
      const remove = () =>
        callUpload({
          method: 'DELETE',
          path: `/api/v1/files/trash/${stored.body.data.id}`,
          headers: owner.headers,
        });

      // Act
      const failed = await remove();
      const afterFailure = {
        usage: await usageOf(owner),
        objects: await listBucket(),
        record: await table.get(fileKey(stored.body.data.id)),
      };
      const retried = await remove();

      // Assess
      expect(injected.failed).toBe(1);
      expectCleanFailure(kind, {
        status: failed.status,
        headers: failed.headers,
        raw: JSON.stringify(failed.body),
      });
      expect(afterFailure.usage).toEqual({ used_bytes: stored.body.data.size, file_count: 1 });
      expect(afterFailure.objects).toContain(trashKey(stored.body.data.key));
      expect(afterFailure.record).toBeDefined();
      expect(retried.status).toBe(200);
      expect(await usageOf(owner)).toEqual({ used_bytes: 0, file_count: 0 });
      expect(await listBucket()).not.toContain(trashKey(stored.body.data.key));
      await expectNoOrphans();
    });

    it(`the settlement transaction fails (${kind}): order pending, no grant, no event; the retry grants once`, async () => {
      // Prepare: a mock order of a plan that grants storage (settlement is then one transaction).
      const buyer = await createTestAccount();
      const planId = await quotaPlan();
      const order = await callPayments('POST', '/api/v1/orders', {
        headers: buyer.headers,
        body: { plan_id: planId, provider: 'mock' },
      });
      const orderId = order.json.data.id as string;
      const injected = dynamo({
        command: 'TransactWriteItemsCommand',
        when: mentions('order#'),
        error: kind,
      });
      const pay = () => callPayments('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers });

      // Act
      const failed = await pay();
      const afterFailure = {
        order: await table.get(orderKey(orderId)),
        usage: await table.get(usageKey(buyer.account.id)),
        events: await paidEvents(lines, orderId),
      };
      const retried = await pay();

      // Assess
      expect(injected.failed).toBe(1);
      expectCleanFailure(kind, { status: failed.status, headers: failed.headers, raw: failed.text });
      expect(afterFailure.order).toMatchObject({ status: 'pending' });
      expect(afterFailure.order?.grant).toBeUndefined();
      expect(afterFailure.usage?.grant).toBeUndefined();
      expect(afterFailure.events).toBe(0);
      expect(retried.status).toBe(200);
      expect((await table.get(usageKey(buyer.account.id)))?.grant).toMatchObject({
        order_id: orderId,
        quota_bytes: 80_000,
      });
      expect(await paidEvents(lines, orderId)).toBe(1);
      await expectNoOrphans();
    });
  }

  it('the settlement transaction of a channel callback fails: nothing granted; the redelivery grants once', async () => {
    // Prepare
    const buyer = await createTestAccount();
    const planId = await quotaPlan();
    const order = await callPayments('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'channel_c' },
    });
    const orderId = order.json.data.id as string;
    const notification = buildEpayNotify({
      key: C_KEY,
      fields: epayNotifyFields({
        pid: C_PID,
        out_trade_no: orderId,
        money: '12.30',
        trade_no: `T${orderId}`,
      }),
    });
    dynamo({ command: 'TransactWriteItemsCommand', when: mentions('order#'), error: 'throttling' });

    // Act
    const failed = await deliverCallback('channel_c', notification);
    const usageAfterFailure = await table.get(usageKey(buyer.account.id));
    const redelivered = await deliverCallback('channel_c', notification);

    // Assess
    expect(failed.status).toBe(503);
    expect(usageAfterFailure?.grant).toBeUndefined();
    expect(redelivered.text).toBe('success');
    expect((await table.get(usageKey(buyer.account.id)))?.grant).toMatchObject({ order_id: orderId });
    expect(await paidEvents(lines, orderId)).toBe(1);
  });
});
