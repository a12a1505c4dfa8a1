// Refunds through a channel (docs/DESIGN.md 17): a channel_c order paid by its signed callback is refunded
// through EPay's api.php?act=refund (pid and key in the form body, the money in yuan), once per
// Idempotency-Key however many calls race; a refusal fails the refund and leaves its amount to refund; no
// usable answer leaves it pending. Channels whose refund interface is not offered refuse with 409.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { C_KEY, C_PID, call, captureLog, deliverCallback, paidEvents } from './helpers.ts';
import {
  type Channel,
  type ChannelHarness,
  createPlan,
  grantOf,
  placeOrder,
  reconcilerAhead,
  startChannels,
} from './reconcile-support.ts';

const log = captureLog();
let table: Table;
let admin: TestAccount;
let channels: ChannelHarness;
let planId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  admin = await createTestAccount({ role: 'admin' });
  channels = await startChannels(admin);
  planId = await createPlan(admin, 'Channel refund plan');
});

afterAll(async () => {
  await channels.close();
});

/** A channel order of `who`, paid by the channel's signed callback (12.30). */
async function paidChannelOrder(who: TestAccount, channel: Channel = 'channel_c'): Promise<string> {
  const id = await placeOrder(who, planId, channel);
  const delivered = await deliverCallback(channel, channels.callbackFor(channel, id));
  expect(delivered.status).toBe(200);
  return id;
}

const refund = (id: string, body: object, key = randomUUID()) =>
  call('POST', `/api/v1/admin/orders/${id}/refund`, {
    headers: { ...admin.headers, 'idempotency-key': key },
    body,
  });

const refundsAsked = (id: string) => channels.epay.refunds.filter((item) => item.out_trade_no === id);

describe('channel_c refunds', () => {
  it('refunds in full through api.php?act=refund: refunded, grant taken back, order.refunded once', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer);
    expect(await grantOf(table, buyer.account.id)).toBeDefined();

    const answer = await refund(id, { reason: 'not wanted' });

    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
    expect(answer.json.data.refunds).toEqual([
      expect.objectContaining({ amount_cents: 1230, status: 'succeeded', reason: 'not wanted' }),
    ]);
    expect(refundsAsked(id)).toEqual([{ out_trade_no: id, money: '12.30' }]);
    // The fake checked pid and key from the form body; the key never reaches a log line.
    expect(JSON.stringify(log)).not.toContain(C_KEY);
    expect(C_PID).toBeTruthy();
    expect(await grantOf(table, buyer.account.id)).toBeUndefined();
    await paidEvents(log, id);
    expect(
      log.filter(
        (line) =>
          line.message === 'event' &&
          line.event === 'order.refunded' &&
          (line.detail as { order_id?: string }).order_id === id,
      ),
    ).toHaveLength(1);
  });

  it('asks the channel once for 20 concurrent calls with one Idempotency-Key', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer);
    const key = randomUUID();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(id, { amount_cents: 230, reason: 'part' }, key)),
    );

    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(refundsAsked(id)).toHaveLength(1);
    const stored = await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers });
    expect(stored.json.data).toMatchObject({ status: 'paid', refunded_cents: 230 });
    expect(stored.json.data.refunds).toEqual([expect.objectContaining({ status: 'succeeded' })]);
  });

  it('fails a refund the channel refuses, leaving its amount to refund', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer);
    channels.epay.setRefundMode('refuse');
    try {
      const refused = await refund(id, { amount_cents: 500, reason: 'refused' });
      expect(refused.status).toBe(200);
      expect(refused.json.data).toMatchObject({ status: 'paid', refunded_cents: 0 });
      expect(refused.json.data.refunds).toEqual([expect.objectContaining({ status: 'failed' })]);
    } finally {
      channels.epay.setRefundMode('refund');
    }
    const again = await refund(id, { reason: 'all of it' });
    expect(again.json.data).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
  });

  it('leaves a refund pending when the channel gives no usable answer', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer);
    channels.epay.setRefundMode('down');
    try {
      const answer = await refund(id, { reason: 'gateway down' });
      expect(answer.status).toBe(200);
      expect(answer.json.data).toMatchObject({ status: 'paid', refunded_cents: 1230 });
      expect(answer.json.data.refunds).toEqual([expect.objectContaining({ status: 'pending' })]);
      // Nothing is left to refund while it is pending.
      expect((await refund(id, { amount_cents: 1, reason: 'more' })).status).toBe(400);
    } finally {
      channels.epay.setRefundMode('refund');
    }
  });
});

describe('channel_a refunds', () => {
  it('refunds through alipay.trade.refund, signed by the SDK, its signed answer verified, once per key', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_a');
    const key = randomUUID();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(id, { amount_cents: 1230, reason: 'alipay refund' }, key)),
    );

    // Every call answers the order (a twin may answer while the channel is still being asked: pending).
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const stored = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(stored).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
    // The fake took only requests whose RSA2 signature verified with our app key; one, carrying our refund id.
    const asked = channels.alipay.refundRequests.filter((request) => request.out_trade_no === id);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      refund_amount: '12.30',
      out_request_no: answers[0]!.json.data.refunds[0].id,
    });
    expect(await grantOf(table, buyer.account.id)).toBeUndefined();
  });

  it('asks Alipay about a refund whose answer was lost, and completes it by the signed query answer', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_a');
    channels.alipay.loseRefundAnswers.value = true;
    let refundNo: string;
    try {
      const asked = await refund(id, { reason: 'answer lost' });
      expect(asked.json.data.refunds).toEqual([expect.objectContaining({ status: 'pending' })]);
      refundNo = asked.json.data.refunds[0].id;
    } finally {
      channels.alipay.loseRefundAnswers.value = false;
    }

    const run = await reconcilerAhead(5)();

    expect(run.refunds_completed).toBeGreaterThanOrEqual(1);
    const stored = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(stored).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
    expect(stored.refunds[0]).toMatchObject({ id: refundNo, status: 'succeeded' });
  });

  it('fails a refund Alipay refuses (more than the trade), refunding nothing', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_a');
    // Alipay already refunded part of it elsewhere (its own back office): what we ask is now too much.
    channels.alipay.refundsMade.set('elsewhere', { out_trade_no: id, cents: 1000 });

    const answer = await refund(id, { reason: 'too much now' });

    expect(answer.json.data).toMatchObject({ status: 'paid', refunded_cents: 0 });
    expect(answer.json.data.refunds).toEqual([expect.objectContaining({ status: 'failed' })]);
  });
});

describe('channel_b refunds', () => {
  it('asks WeChat Pay (signed by the SDK, its signed answer verified), pending until the signed refund notice', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_b');
    const key = randomUUID();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(id, { reason: 'wechat refund' }, key)),
    );

    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const pending = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(pending).toMatchObject({ status: 'paid', refunded_cents: 1230 });
    expect(pending.refunds).toEqual([expect.objectContaining({ status: 'pending' })]);
    const refundNo = pending.refunds[0].id as string;
    // One request, authorized with our merchant key (the fake verified it), naming our refund and its notify URL.
    const asked = channels.wechatpay.refundRequests.filter((request) => request.out_trade_no === id);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      out_refund_no: refundNo,
      amount: { refund: 1230, total: 1230, currency: 'CNY' },
      notify_url: expect.stringMatching(/\/api\/v1\/payments\/channel_b\/callback$/),
    });

    // Act: the notice, delivered twice (WeChat Pay re-sends).
    const notice = channels.refundNoticeFor(id, refundNo);
    const [first, again] = [
      await deliverCallback('channel_b', notice),
      await deliverCallback('channel_b', notice),
    ];

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    const done = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(done).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
    expect(done.refunds).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    expect(await grantOf(table, buyer.account.id)).toBeUndefined();
    // The callback function told the buyer, once (without a mail channel: one log line per mail).
    expect(
      log.filter(
        (line) =>
          line.message === 'mail' &&
          line.to === buyer.account.email &&
          line.subject === 'Your order was refunded',
      ),
    ).toHaveLength(1);
    await paidEvents(log, id);
    expect(
      log.filter(
        (line) => line.event === 'order.refunded' && (line.detail as { order_id?: string }).order_id === id,
      ),
    ).toHaveLength(1);
  });

  it('settles a refund left pending when the reconciler asks WeChat Pay about it', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_b');
    const asked = await refund(id, { reason: 'notice lost' });
    const refundNo = asked.json.data.refunds[0].id as string;
    // Not due yet (first check 3 minutes on), then due but still processing: pending.
    expect((await reconcilerAhead(1)()).refunds_completed).toBe(0);
    expect((await reconcilerAhead(5)()).refunds_completed).toBe(0);

    channels.wechatpay.refundStatus.set(refundNo, 'SUCCESS');
    const run = await reconcilerAhead(12)();

    expect(run.refunds_completed).toBe(1);
    const stored = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(stored).toMatchObject({ status: 'refunded', refunded_cents: 1230 });
    // Settled: off the schedule, never asked again.
    expect((await reconcilerAhead(60)()).refunds_completed).toBe(0);
  });

  it('fails the refund on REFUND.CLOSED and refuses a notice for a refund it never asked', async () => {
    const buyer = await createTestAccount();
    const id = await paidChannelOrder(buyer, 'channel_b');
    const asked = await refund(id, { amount_cents: 500, reason: 'closed later' });
    const refundNo = asked.json.data.refunds[0].id as string;

    const closed = await deliverCallback(
      'channel_b',
      channels.refundNoticeFor(id, refundNo, 'REFUND.CLOSED'),
    );
    const stranger = await deliverCallback('channel_b', channels.refundNoticeFor(id, randomUUID()));

    expect(closed.status).toBe(200);
    expect(stranger.status).toBe(400);
    const stored = (await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers })).json.data;
    expect(stored).toMatchObject({ status: 'paid', refunded_cents: 0 });
    expect(stored.refunds).toEqual([expect.objectContaining({ status: 'failed' })]);
  });
});
