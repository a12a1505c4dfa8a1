// A fake EPay (彩虹易支付) mapi.php and notifications signed the EPay V1 MD5 way.
import { createHash } from 'node:crypto';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { centsOfYuan, QueryBook, yuanText } from './query-book.ts';
import type { FakeReply, FakeRequest, LoopbackServer } from './server.ts';
import { startLoopbackServer } from './server.ts';

/** EPay V1: drop sign, sign_type and empty values, sort, join raw, append the key, md5 lower hex. */
export function epayMd5Sign(params: Record<string, string>, key: string): string {
  const content = Object.keys(params)
    .filter((name) => params[name] !== '' && name !== 'sign' && name !== 'sign_type')
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
  return createHash('md5').update(`${content}${key}`, 'utf8').digest('hex');
}

export interface FakeEpayOptions {
  pid: string;
  key: string;
  /** Replace the JSON answer for a correctly signed order. */
  answer?: (params: Record<string, string>) => Record<string, unknown>;
}

/** The trade number of a paid order, the same one epayNotifyFields() reports by default. */
export const C_TRADE_NO = '2024010112000012345';

/** How api.php?act=refund answers: refund (code 1), refuse (code -1), or fail as a server (500). */
export type EpayRefundMode = 'refund' | 'refuse' | 'down';

export interface FakeEpay extends LoopbackServer {
  mapiUrl: string;
  /** api.php?act=refund: every refund it was asked for (authenticated ones), and how the next is answered. */
  refunds: Array<{ out_trade_no: string; money: string }>;
  setRefundMode(mode: EpayRefundMode): void;
  /** api.php?act=order: the orders it took and how each query is answered. */
  queries: QueryBook;
  receivedParams(): Array<Record<string, string>>;
}

function formParams(request: FakeRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(request.body));
}

export async function startFakeEpay(options: FakeEpayOptions): Promise<FakeEpay> {
  const queries = new QueryBook();
  const json = (body: Record<string, unknown>): FakeReply => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  // 彩虹 api.php?act=order (docs/PAYMENTS-GUIDE.md): authenticated by pid + key in the query, answered unsigned.
  const orderQuery = (params: URLSearchParams): FakeReply => {
    if (params.get('act') !== 'order') return json({ code: -5, msg: 'No Act!' });
    if (params.get('pid') !== options.pid || params.get('key') !== options.key) {
      return json({ code: -3, msg: 'KEY校验失败' });
    }
    const outTradeNo = params.get('out_trade_no') ?? '';
    if (!outTradeNo) return json({ code: -4, msg: '订单号不能为空' });
    const mode = queries.ask(outTradeNo);
    const amount = queries.amountOf(outTradeNo);
    const order = (fields: Record<string, unknown> = {}) =>
      json({
        code: 1,
        msg: 'succ',
        trade_no: C_TRADE_NO,
        out_trade_no: outTradeNo,
        api_trade_no: '4200000000202401011234567890',
        type: 'wxpay',
        pid: Number(options.pid),
        addtime: '2024-01-01 12:00:00',
        endtime: '2024-01-01 12:00:04',
        name: 'VIP',
        money: yuanText(amount),
        param: '',
        buyer: '',
        status: 1,
        ...fields,
      });
    switch (mode) {
      case 'paid':
        return order();
      case 'not_paid':
        return order({ status: 0, endtime: null });
      case 'unknown_order':
        return json({ code: -1, msg: '订单号不存在' });
      case 'down':
        return { status: 500, body: 'Internal Server Error' };
      case 'unreachable':
        return { status: 0, body: '', destroy: true };
      case 'garbage':
        return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>502 upstream</html>' };
      case 'wrong_signature':
        throw new Error('EPay V1 signs no query answer: there is no wrong signature to send');
      case 'wrong_amount':
        return order({ money: yuanText(amount + 100) });
      case 'other_merchant':
        return order({ pid: Number(options.pid) + 1 });
    }
  };

  // 彩虹 api.php?act=refund: pid and key in the form body, out_trade_no (or trade_no) and money in yuan;
  // answered unsigned, code 1 when refunded. It refuses more than what is left of the order's amount.
  const refunds: Array<{ out_trade_no: string; money: string }> = [];
  let refundMode: EpayRefundMode = 'refund';
  /** Cents refunded so far, by out_trade_no. */
  const refunded = new Map<string, number>();
  const refund = (params: Record<string, string>): FakeReply => {
    if (params.pid !== options.pid || params.key !== options.key)
      return json({ code: -3, msg: 'KEY校验失败' });
    const outTradeNo = params.out_trade_no ?? '';
    if (!outTradeNo && !params.trade_no) return json({ code: -4, msg: '订单号不能为空' });
    refunds.push({ out_trade_no: outTradeNo, money: params.money ?? '' });
    if (refundMode === 'down') return { status: 500, body: 'Internal Server Error' };
    if (refundMode === 'refuse') return json({ code: -1, msg: '退款失败' });
    const done = refunded.get(outTradeNo) ?? 0;
    const cents = centsOfYuan(params.money);
    if (done + cents > queries.amountOf(outTradeNo)) return json({ code: -1, msg: '退款金额超过订单金额' });
    refunded.set(outTradeNo, done + cents);
    return json({ code: 1, msg: '退款成功' });
  };

  const answer = (request: FakeRequest): FakeReply => {
    if (request.method === 'POST' && request.url === '/api.php?act=refund')
      return refund(formParams(request));
    if (request.method === 'GET' && request.url.startsWith('/api.php?')) {
      return orderQuery(new URL(request.url, 'http://fake').searchParams);
    }
    if (request.method !== 'POST' || !request.url.startsWith('/mapi.php')) {
      return { status: 404, body: 'not found' };
    }
    const params = formParams(request);
    if (params.pid !== options.pid) {
      return json({ code: -1, msg: '商户不存在' });
    }
    if (params.sign !== epayMd5Sign(params, options.key)) {
      return json({ code: -1, msg: '签名校验失败' });
    }
    queries.remember(params.out_trade_no ?? '', centsOfYuan(params.money));
    return json(
      options.answer?.(params) ?? {
        code: 1,
        msg: 'succ',
        trade_no: '2024010112000012345',
        qrcode: 'weixin://wxpay/bizpayurl?pr=fakeEpay',
      },
    );
  };
  const server = await startLoopbackServer(answer);
  return {
    ...server,
    mapiUrl: `${server.baseUrl}/mapi.php`,
    queries,
    refunds,
    setRefundMode: (mode) => {
      refundMode = mode;
    },
    receivedParams: () => server.requests.map(formParams),
  };
}

export function epayNotifyFields(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    pid: '1001',
    trade_no: '2024010112000012345',
    out_trade_no: 'ORDER123',
    type: 'alipay',
    name: 'VIP',
    money: '1.00',
    trade_status: 'TRADE_SUCCESS',
    ...overrides,
  };
}

export interface EpayNotifyOptions {
  key: string;
  fields?: Record<string, string>;
  signature?: string;
  omitSignature?: boolean;
  method?: 'GET' | 'POST';
}

/** A notification as the aggregator sends it: a GET whose query carries the signed fields. */
export function buildEpayNotify(options: EpayNotifyOptions): CallbackRequest {
  const fields = options.fields ?? epayNotifyFields();
  const query = new URLSearchParams(fields);
  if (!options.omitSignature) {
    query.set('sign', options.signature ?? epayMd5Sign(fields, options.key));
  }
  query.set('sign_type', 'MD5');
  if (options.method === 'POST') {
    return {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: Buffer.from(query.toString(), 'utf8'),
      rawQuery: '',
    };
  }
  return { method: 'GET', headers: {}, rawBody: Buffer.alloc(0), rawQuery: query.toString() };
}
