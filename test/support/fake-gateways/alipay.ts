// A fake Alipay v2 gateway (alipay.trade.precreate) and notifications signed the way Alipay signs them.

import type { KeyObject } from 'node:crypto';
import { sign as rsaSign, verify as rsaVerify } from 'node:crypto';
import type { CallbackRequest } from '../../../lib/payments/channels/types.ts';
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

export interface FakeAlipayGateway extends LoopbackServer {
  gatewayUrl: string;
  /** Parameters (query and form merged) of every request received. */
  receivedParams(): Array<Record<string, string>>;
}

function requestParams(request: FakeRequest): Record<string, string> {
  const query = new URL(request.url, 'http://fake').searchParams;
  return { ...Object.fromEntries(query), ...Object.fromEntries(new URLSearchParams(request.body)) };
}

export async function startFakeAlipayGateway(options: FakeAlipayGatewayOptions): Promise<FakeAlipayGateway> {
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
    const inner =
      options.innerAnswer ??
      (requestVerifies && params.method === 'alipay.trade.precreate'
        ? {
            code: '10000',
            msg: 'Success',
            out_trade_no: bizContent.out_trade_no,
            qr_code: options.qrCode ?? 'https://qr.alipay.com/bax08431ffakeqrcode',
          }
        : {
            code: '40002',
            msg: 'Invalid Arguments',
            sub_code: 'isv.invalid-signature',
            sub_msg: 'bad sign',
          });
    // Alipay escapes slashes, so the signed text differs from a re-serialisation of the parsed object.
    const innerText = JSON.stringify(inner).replaceAll('/', '\\/');
    const signature = alipayRsa2Sign(innerText, options.answerSignedBy ?? options.alipayPrivateKey);
    return {
      status: 200,
      headers: { 'content-type': 'text/html;charset=utf-8' },
      body: `{"alipay_trade_precreate_response":${innerText},"sign":"${signature}"}`,
    };
  };
  const server = await startLoopbackServer(answer);
  return {
    ...server,
    gatewayUrl: `${server.baseUrl}/gateway.do`,
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
