// A fake Alipay v2 gateway (alipay.trade.precreate) and notifications signed the way Alipay signs them.

import type { KeyObject } from 'node:crypto';
import { sign as rsaSign, verify as rsaVerify } from 'node:crypto';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { centsOfYuan, QueryBook, yuanText } from './query-book.ts';
import type { FakeReply, FakeRequest, LoopbackServer } from './server.ts';
import { startLoopbackServer } from './server.ts';

/** Alipay's sorted `k=v&...` content: empty values and the `excluded` names left out. */
export function alipaySigningContent(params: Record<string, string>, excluded: readonly string[]): string {
  return Object.keys(params)
    .filter((name) => params[name] !== '' && !excluded.includes(name))
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
}

export function alipayRsa2Sign(content: string, privateKey: KeyObject): string {
  return rsaSign('RSA-SHA256', Buffer.from(content, 'utf8'), privateKey).toString('base64');
}

export interface FakeAlipayGatewayOptions {
  /** Stands in for Alipay's own key: signs every answer. */
  alipayPrivateKey: KeyObject;
  /** Our application public key: requests that do not verify with it get isv.invalid-signature. */
  appPublicKey: KeyObject;
  qrCode?: string;
  /** Sign answers with this key instead (a forged or misconfigured gateway). */
  answerSignedBy?: KeyObject;
  /** Replace the inner response object (e.g. a business failure). */
  innerAnswer?: Record<string, unknown>;
}

/** The seller (PID) the fake's trade answers name; configure it as `seller_id` to have it checked. */
export const A_SELLER_ID = '2088000000000000';
const OTHER_SELLER_ID = '2088999999999999';
/** The trade number of a paid order, the same one alipayNotifyFields() reports by default. */
export const A_TRADE_NO = '2024010122001400000000000001';

export interface FakeAlipayGateway extends LoopbackServer {
  gatewayUrl: string;
  /** alipay.trade.query: the orders it took and how each query is answered. */
  queries: QueryBook;
  /** alipay.trade.refund: every verified refund request, and the refunds made by out_request_no. */
  refundRequests: Array<Record<string, unknown>>;
  refundsMade: Map<string, { out_trade_no: string; cents: number }>;
  /** When set, a refund is made but its answer is lost (HTTP 502): our side is left not knowing. */
  loseRefundAnswers: { value: boolean };
  /** Parameters (query and form merged) of every request received. */
  receivedParams(): Array<Record<string, string>>;
}

function requestParams(request: FakeRequest): Record<string, string> {
  const query = new URL(request.url, 'http://fake').searchParams;
  return { ...Object.fromEntries(query), ...Object.fromEntries(new URLSearchParams(request.body)) };
}

export async function startFakeAlipayGateway(options: FakeAlipayGatewayOptions): Promise<FakeAlipayGateway> {
  const queries = new QueryBook();
  const signedAnswer = (
    responseKey: string,
    inner: Record<string, unknown>,
    corruptSign = false,
  ): FakeReply => {
    // Alipay escapes slashes, so the signed text differs from a re-serialisation of the parsed object.
    const innerText = JSON.stringify(inner).replaceAll('/', '\\/');
    // A signature over other bytes than those sent: it can never verify.
    const signedText = corruptSign ? `${innerText} ` : innerText;
    const signature = alipayRsa2Sign(signedText, options.answerSignedBy ?? options.alipayPrivateKey);
    return {
      status: 200,
      headers: { 'content-type': 'text/html;charset=utf-8' },
      body: `{"${responseKey}":${innerText},"sign":"${signature}"}`,
    };
  };
  const invalidSignature = {
    code: '40002',
    msg: 'Invalid Arguments',
    sub_code: 'isv.invalid-signature',
    sub_msg: 'bad sign',
  };

  const tradeQuery = (outTradeNo: string): FakeReply => {
    const mode = queries.ask(outTradeNo);
    const amount = queries.amountOf(outTradeNo);
    const trade = ({ corruptSign = false, ...fields }: Record<string, unknown>) =>
      signedAnswer(
        'alipay_trade_query_response',
        {
          code: '10000',
          msg: 'Success',
          trade_no: A_TRADE_NO,
          out_trade_no: outTradeNo,
          buyer_logon_id: '159****5620',
          trade_status: 'TRADE_SUCCESS',
          total_amount: yuanText(amount),
          seller_id: A_SELLER_ID,
          send_pay_date: '2024-01-01 12:00:04',
          ...fields,
        },
        corruptSign === true,
      );
    switch (mode) {
      case 'paid':
        return trade({});
      case 'not_paid':
        return trade({ trade_status: 'WAIT_BUYER_PAY', trade_no: undefined, send_pay_date: undefined });
      case 'unknown_order':
        return signedAnswer('alipay_trade_query_response', {
          code: '40004',
          msg: 'Business Failed',
          sub_code: 'ACQ.TRADE_NOT_EXIST',
          sub_msg: '交易不存在',
        });
      case 'down':
        return { status: 500, body: 'Internal Server Error' };
      case 'unreachable':
        return { status: 0, body: '', destroy: true };
      case 'garbage':
        return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>502 upstream</html>' };
      case 'wrong_signature':
        return trade({ corruptSign: true });
      case 'wrong_amount':
        return trade({ total_amount: yuanText(amount + 100) });
      case 'other_merchant':
        return trade({ seller_id: OTHER_SELLER_ID });
    }
  };

  // alipay.trade.refund: out_request_no is the idempotency key (the same one again refunds nothing more and
  // answers fund_change N); more than what is left is ACQ.REFUND_AMT_NOT_EQUAL_TOTAL.
  const refundRequests: Array<Record<string, unknown>> = [];
  const refundsMade = new Map<string, { out_trade_no: string; cents: number }>();
  const tradeRefund = (bizContent: Record<string, unknown>): FakeReply => {
    refundRequests.push(bizContent);
    const outTradeNo = String(bizContent.out_trade_no ?? '');
    const requestNo = String(bizContent.out_request_no ?? outTradeNo);
    const cents = centsOfYuan(String(bizContent.refund_amount ?? ''));
    const refundedOf = () =>
      [...refundsMade.values()]
        .filter((made) => made.out_trade_no === outTradeNo)
        .reduce((sum, made) => sum + made.cents, 0);
    const result = (fundChange: 'Y' | 'N') =>
      signedAnswer('alipay_trade_refund_response', {
        code: '10000',
        msg: 'Success',
        trade_no: A_TRADE_NO,
        out_trade_no: outTradeNo,
        buyer_logon_id: '159****5620',
        fund_change: fundChange,
        refund_fee: yuanText(refundedOf()),
        gmt_refund_pay: '2024-01-02 12:00:00',
      });
    if (refundsMade.has(requestNo)) return result('N');
    if (refundedOf() + cents > queries.amountOf(outTradeNo)) {
      return signedAnswer('alipay_trade_refund_response', {
        code: '40004',
        msg: 'Business Failed',
        sub_code: 'ACQ.REFUND_AMT_NOT_EQUAL_TOTAL',
        sub_msg: '退款金额超限',
      });
    }
    refundsMade.set(requestNo, { out_trade_no: outTradeNo, cents });
    if (loseRefundAnswers.value) return { status: 502, body: 'Bad Gateway' };
    return result('Y');
  };
  const loseRefundAnswers = { value: false };

  // alipay.trade.fastpay.refund.query: a refund made answers refund_amount and REFUND_SUCCESS; one it never
  // made answers code 10000 without them (Alipay's rule: no refund data, no refund).
  const refundQuery = (bizContent: Record<string, unknown>): FakeReply => {
    const outTradeNo = String(bizContent.out_trade_no ?? '');
    const requestNo = String(bizContent.out_request_no ?? '');
    const made = refundsMade.get(requestNo);
    return signedAnswer('alipay_trade_fastpay_refund_query_response', {
      code: '10000',
      msg: 'Success',
      out_trade_no: outTradeNo,
      out_request_no: requestNo,
      ...(made && made.out_trade_no === outTradeNo
        ? {
            trade_no: A_TRADE_NO,
            total_amount: yuanText(queries.amountOf(outTradeNo)),
            refund_amount: yuanText(made.cents),
            refund_status: 'REFUND_SUCCESS',
          }
        : {}),
    });
  };

  const answer = (request: FakeRequest): FakeReply => {
    const params = requestParams(request);
    // Request recipe (docs/PAYMENTS-GUIDE.md 1.4): only `sign` is left out; sign_type is part of the signed content.
    const requestVerifies = rsaVerify(
      'RSA-SHA256',
      Buffer.from(alipaySigningContent(params, ['sign']), 'utf8'),
      options.appPublicKey,
      Buffer.from(params.sign ?? '', 'base64'),
    );
    const bizContent = JSON.parse(params.biz_content ?? '{}') as Record<string, unknown>;
    if (params.method === 'alipay.trade.fastpay.refund.query') {
      if (!requestVerifies)
        return signedAnswer('alipay_trade_fastpay_refund_query_response', invalidSignature);
      return refundQuery(bizContent);
    }
    if (params.method === 'alipay.trade.refund') {
      if (!requestVerifies) return signedAnswer('alipay_trade_refund_response', invalidSignature);
      return tradeRefund(bizContent);
    }
    if (params.method === 'alipay.trade.query') {
      if (!requestVerifies) return signedAnswer('alipay_trade_query_response', invalidSignature);
      return tradeQuery(String(bizContent.out_trade_no ?? ''));
    }
    if (requestVerifies && params.method === 'alipay.trade.precreate') {
      queries.remember(String(bizContent.out_trade_no), centsOfYuan(String(bizContent.total_amount)));
    }
    const inner =
      options.innerAnswer ??
      (requestVerifies && params.method === 'alipay.trade.precreate'
        ? {
            code: '10000',
            msg: 'Success',
            out_trade_no: bizContent.out_trade_no,
            qr_code: options.qrCode ?? 'https://qr.alipay.com/bax08431ffakeqrcode',
          }
        : invalidSignature);
    return signedAnswer('alipay_trade_precreate_response', inner);
  };
  const server = await startLoopbackServer(answer);
  return {
    ...server,
    gatewayUrl: `${server.baseUrl}/gateway.do`,
    queries,
    refundRequests,
    refundsMade,
    loseRefundAnswers,
    receivedParams: () => server.requests.map(requestParams),
  };
}

export function alipayNotifyFields(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    notify_time: '2024-01-01 12:00:05',
    notify_type: 'trade_status_sync',
    notify_id: 'ac05099524730693a8b330c5ecf72da9786',
    charset: 'utf-8',
    version: '1.0',
    app_id: '2021000000000000',
    auth_app_id: '2021000000000000',
    trade_no: '2024010122001400000000000001',
    out_trade_no: 'ORDER0001',
    buyer_id: '2088102000000000',
    seller_id: '2088000000000000',
    trade_status: 'TRADE_SUCCESS',
    total_amount: '12.30',
    receipt_amount: '12.30',
    buyer_pay_amount: '12.30',
    subject: 'VIP plan',
    gmt_create: '2024-01-01 12:00:00',
    gmt_payment: '2024-01-01 12:00:04',
    ...overrides,
  };
}

export interface AlipayNotifyOptions {
  /** Stands in for Alipay's key. */
  alipayPrivateKey: KeyObject;
  fields?: Record<string, string>;
  /** Sends this `sign` instead of the computed one. */
  signature?: string;
  omitSignature?: boolean;
}

/** A notification as Alipay POSTs it: form-encoded, signed per rsaCheckV1, malformed content type. */
export function buildAlipayNotify(options: AlipayNotifyOptions): CallbackRequest {
  const fields = options.fields ?? alipayNotifyFields();
  const form = new URLSearchParams(fields);
  if (!options.omitSignature) {
    const content = alipaySigningContent(fields, ['sign', 'sign_type']);
    form.set('sign', options.signature ?? alipayRsa2Sign(content, options.alipayPrivateKey));
  }
  form.set('sign_type', 'RSA2');
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; text/html; charset=UTF-8' },
    rawBody: Buffer.from(form.toString(), 'utf8'),
    rawQuery: '',
  };
}
