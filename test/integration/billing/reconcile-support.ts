// What the reconciliation tests share: the three fake gateways (which answer order queries too), the channels
// saved through the admin API, orders placed through the API, signed callbacks, and the reconciler worker
// built by its production builder (functions/reconciler/deps.ts) on a clock moved forward, so an order
// placed now is as old as a test needs it to be.
import { expect } from 'vitest';
import { buildReconcilerDeps } from '#functions/reconciler/deps.ts';
import { createReconcilerHandler } from '#functions/reconciler/handler.ts';
import { needs } from '#functions/reconciler/needs.ts';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import type { StoredOrder } from '#lib/billing/model.ts';
import { orderKey } from '#lib/billing/orders.ts';
import type { ReconcileSummary } from '#lib/billing/reconcile.ts';
import type { Grant } from '#lib/files/quota-model.ts';
import { usageKey } from '#lib/files/usage.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { TestAccount } from '#test/support/accounts.ts';
import { lambdaContext } from '#test/support/events.ts';
import {
  A_SELLER_ID,
  alipayNotifyFields,
  buildAlipayNotify,
  buildEpayNotify,
  buildWechatpayCallback,
  epayNotifyFields,
  type FakeAlipayGateway,
  type FakeEpay,
  type FakeWechatpay,
  generateChannelKeys,
  type QueryBook,
  startFakeChannels,
  wechatpayTransaction,
} from '#test/support/fake-gateways/index.ts';
import {
  buildWechatpayRefundNotice,
  wechatpayRefundResource,
} from '#test/support/fake-gateways/wechatpay.ts';
import { testResources } from '#test/support/resources.ts';
import { B_API_V3_KEY, B_MCH_ID, B_PLATFORM_SERIAL, C_KEY, C_PID, call } from './helpers.ts';

export type Channel = 'channel_a' | 'channel_b' | 'channel_c';
export const CHANNELS: readonly Channel[] = ['channel_a', 'channel_b', 'channel_c'];

/** The trade number each fake reports for a paid order, by query and by its default callback alike. */
export const TRADE_NO: Record<Channel, string> = {
  channel_a: '2024010122001400000000000001',
  channel_b: '1217752501201407033233368018',
  channel_c: '2024010112000012345',
};

const MINUTE_MS = 60_000;

export interface ChannelHarness {
  alipay: FakeAlipayGateway;
  wechatpay: FakeWechatpay;
  epay: FakeEpay;
  queries(channel: Channel): QueryBook;
  /** A signed callback reporting this order paid (default amount 12.30), as the channel sends it. */
  callbackFor(channel: Channel, orderId: string, amountYuan?: string): CallbackRequest;
  /** channel_b's signed, encrypted refund notice for our refund `refundNo` of `orderId`. */
  refundNoticeFor(
    orderId: string,
    refundNo: string,
    eventType?: 'REFUND.SUCCESS' | 'REFUND.ABNORMAL' | 'REFUND.CLOSED',
  ): CallbackRequest;
  close(): Promise<void>;
}

/** Starts the fakes and saves all three channels (channel_a with its seller_id) through the admin API. */
export async function startChannels(admin: TestAccount): Promise<ChannelHarness> {
  // Generated once per file (RSA generation is the slow part).
  const keys = generateChannelKeys();
  const { alipay: alipayKeys, platform: platformKeys } = keys;
  const channels = await startFakeChannels(keys);
  const { alipay, wechatpay, epay, settings: body } = channels;
  const saved = await call('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    // With seller_id set, an answer naming another seller is refused (the fake names ours by default).
    body: {
      ...body,
      channel_a: { ...body.channel_a, seller_id: A_SELLER_ID },
      current_password: admin.password,
    },
  });
  expect(saved.status).toBe(200);

  return {
    alipay,
    wechatpay,
    epay,
    queries: (channel) => ({ channel_a: alipay, channel_b: wechatpay, channel_c: epay })[channel].queries,
    callbackFor(channel, orderId, amountYuan = '12.30') {
      if (channel === 'channel_a') {
        return buildAlipayNotify({
          alipayPrivateKey: alipayKeys.privateKey,
          fields: alipayNotifyFields({
            out_trade_no: orderId,
            total_amount: amountYuan,
            receipt_amount: amountYuan,
            buyer_pay_amount: amountYuan,
          }),
        });
      }
      if (channel === 'channel_b') {
        const cents = Math.round(Number(amountYuan) * 100);
        return buildWechatpayCallback({
          platformPrivateKey: platformKeys.privateKey,
          platformSerial: B_PLATFORM_SERIAL,
          apiV3Key: B_API_V3_KEY,
          timestamp: Math.floor(Date.now() / 1000),
          transaction: wechatpayTransaction({
            out_trade_no: orderId,
            amount: { total: cents, payer_total: cents, currency: 'CNY', payer_currency: 'CNY' },
          }),
        }).request;
      }
      return buildEpayNotify({
        key: C_KEY,
        fields: epayNotifyFields({ pid: C_PID, out_trade_no: orderId, money: amountYuan }),
      });
    },
    refundNoticeFor(orderId, refundNo, eventType = 'REFUND.SUCCESS') {
      const status = {
        'REFUND.SUCCESS': 'SUCCESS',
        'REFUND.ABNORMAL': 'ABNORMAL',
        'REFUND.CLOSED': 'CLOSED',
      }[eventType];
      return buildWechatpayRefundNotice({
        platformPrivateKey: platformKeys.privateKey,
        platformSerial: B_PLATFORM_SERIAL,
        apiV3Key: B_API_V3_KEY,
        timestamp: Math.floor(Date.now() / 1000),
        eventType,
        refund: wechatpayRefundResource({
          mchid: B_MCH_ID,
          out_trade_no: orderId,
          out_refund_no: refundNo,
          refund_status: status,
        }),
      }).request;
    },
    close: async () => {
      await Promise.all([alipay.close(), wechatpay.close(), epay.close()]);
    },
  };
}

/** A plan through the admin API; with storage, so a settlement's grant can be seen on the account. */
export async function createPlan(admin: TestAccount, name: string, durationDays = 30): Promise<string> {
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name, amount_cents: 1230, quota_bytes: 5 * 1024 ** 2, duration_days: durationDays },
  });
  expect(plan.status).toBe(201);
  return plan.json.data.id;
}

/** Places an order as `buyer`; the channel's fake takes it (and so knows its amount). */
export async function placeOrder(buyer: TestAccount, planId: string, provider: Channel): Promise<string> {
  const answer = await call('POST', '/api/v1/orders', {
    headers: buyer.headers,
    body: { plan_id: planId, provider },
  });
  expect(answer.status).toBe(201);
  return answer.json.data.id;
}

/** The reconciler worker as deployed, its clock `minutesAhead` of now (and Lambda's time left, if given). */
export function reconcilerAhead(minutesAhead: number, timeLeftMs = 30_000): () => Promise<ReconcileSummary> {
  const clock = () => new Date(Date.now() + minutesAhead * MINUTE_MS);
  const deps = buildReconcilerDeps(testResources('reconciler', needs, { clock }));
  const handler = createReconcilerHandler(() => deps);
  const context = { ...lambdaContext, getRemainingTimeInMillis: () => timeLeftMs };
  return () => handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, context);
}

export async function storedOrder(table: Table, id: string): Promise<StoredOrder | undefined> {
  return (await table.get(orderKey(id))) as unknown as StoredOrder | undefined;
}

export async function grantOf(table: Table, accountId: string): Promise<Grant | undefined> {
  return ((await table.get(usageKey(accountId))) as { grant?: Grant } | undefined)?.grant;
}
