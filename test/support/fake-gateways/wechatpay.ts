// A fake WeChat Pay v3 Native endpoint and pay callbacks encrypted and signed the way WeChat Pay does it.

import type { KeyObject } from 'node:crypto';
import { createCipheriv, randomBytes, sign as rsaSign, verify as rsaVerify } from 'node:crypto';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { QueryBook } from './query-book.ts';
import type { FakeReply, FakeRequest, LoopbackServer } from './server.ts';
import { startLoopbackServer } from './server.ts';

export function wechatpaySign(message: string, privateKey: KeyObject): string {
  return rsaSign('RSA-SHA256', Buffer.from(message, 'utf8'), privateKey).toString('base64');
}

/** AEAD_AES_256_GCM as WeChat Pay uses it: base64(ciphertext || 16-byte tag). */
export function wechatpayEncrypt(
  plaintext: string,
  apiV3Key: string,
  nonce: string,
  associatedData: string,
): string {
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  return Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString(
    'base64',
  );
}

function nonceString(length = 32): string {
  return randomBytes(length).toString('base64url').slice(0, length);
}

export interface FakeWechatpayOptions {
  /** Stands in for WeChat Pay's key: signs every answer. */
  platformPrivateKey: KeyObject;
  /** Sent as Wechatpay-Serial (a PUB_KEY_ID_... or a certificate serial). */
  platformSerial: string;
  /** Our merchant public key: requests whose Authorization does not verify get 401 SIGN_ERROR. */
  merchantPublicKey: KeyObject;
  mchId: string;
  codeUrl?: string;
  /** Sign answers with this key instead (a forged answer). */
  answerSignedBy?: KeyObject;
  /** The appid its transactions name (default: the one wechatpayTransaction() uses). */
  appId?: string;
}

export interface FakeWechatpay extends LoopbackServer {
  /** Base URL with a trailing slash, as the plugin's baseURL expects. */
  apiBaseUrl: string;
  /** Query by out_trade_no: the orders it took and how each query is answered. */
  queries: QueryBook;
  /** POST /v3/refund/domestic/refunds: every authorized request's body, and the refunds taken by out_refund_no. */
  refundRequests: Array<Record<string, unknown>>;
  refundsTaken: Map<string, { out_trade_no: string; refund: number; notify_url: string }>;
  /** What GET /v3/refund/domestic/refunds/{out_refund_no} answers as `status` (default PROCESSING). */
  refundStatus: Map<string, 'SUCCESS' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL'>;
}

const QUERY_PATH = /^\/v3\/pay\/transactions\/out-trade-no\/([^/?]+)\?(.*)$/;

const AUTHORIZATION = /^WECHATPAY2-SHA256-RSA2048 (.+)$/;

function authorizationFields(header: string | undefined): Record<string, string> | undefined {
  const match = header ? AUTHORIZATION.exec(header) : null;
  if (!match) return undefined;
  const fields: Record<string, string> = {};
  for (const part of match[1]!.split(',')) {
    const pair = /^\s*(\w+)="([^"]*)"\s*$/.exec(part);
    if (pair) fields[pair[1]!] = pair[2]!;
  }
  return fields;
}

export async function startFakeWechatpay(options: FakeWechatpayOptions): Promise<FakeWechatpay> {
  const queries = new QueryBook();
  const signedReply = (status: number, body: string, corruptSignature = false): FakeReply => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = nonceString();
    const signer = options.answerSignedBy ?? options.platformPrivateKey;
    // A signature over another body than the one sent can never verify.
    const signedBody = corruptSignature ? `${body} ` : body;
    return {
      status,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'request-id': `08F1${nonceString(12)}`,
        'wechatpay-timestamp': timestamp,
        'wechatpay-nonce': nonce,
        'wechatpay-serial': options.platformSerial,
        'wechatpay-signature': wechatpaySign(`${timestamp}\n${nonce}\n${signedBody}\n`, signer),
      },
      body,
    };
  };
  const authorized = (request: FakeRequest): boolean => {
    const auth = authorizationFields(request.headers.authorization);
    const signedLines = [request.method, request.url, auth?.timestamp, auth?.nonce_str, request.body];
    const message = `${signedLines.join('\n')}\n`;
    return (
      auth !== undefined &&
      auth.mchid === options.mchId &&
      rsaVerify(
        'RSA-SHA256',
        Buffer.from(message, 'utf8'),
        options.merchantPublicKey,
        Buffer.from(auth.signature ?? '', 'base64'),
      )
    );
  };
  const signError = () => signedReply(401, JSON.stringify({ code: 'SIGN_ERROR', message: '签名错误' }));

  const transactionQuery = (outTradeNo: string): FakeReply => {
    const mode = queries.ask(outTradeNo);
    const total = queries.amountOf(outTradeNo);
    const transaction = (overrides: Record<string, unknown> = {}) =>
      JSON.stringify(
        wechatpayTransaction({
          ...(options.appId ? { appid: options.appId } : {}),
          mchid: options.mchId,
          out_trade_no: outTradeNo,
          amount: { total, payer_total: total, currency: 'CNY', payer_currency: 'CNY' },
          ...overrides,
        }),
      );
    switch (mode) {
      case 'paid':
        return signedReply(200, transaction());
      case 'not_paid':
        return signedReply(
          200,
          transaction({
            trade_state: 'NOTPAY',
            trade_state_desc: '订单未支付',
            transaction_id: undefined,
            success_time: undefined,
            payer: undefined,
            bank_type: undefined,
          }),
        );
      case 'unknown_order':
        return signedReply(404, JSON.stringify({ code: 'ORDER_NOT_EXIST', message: '订单不存在' }));
      case 'down':
        return signedReply(500, JSON.stringify({ code: 'SYSTEM_ERROR', message: '系统错误' }));
      case 'unreachable':
        return { status: 0, body: '', destroy: true };
      case 'garbage':
        // Signed, yet not JSON: only its shape can refuse it.
        return signedReply(200, '<html>upstream error</html>');
      case 'wrong_signature':
        return signedReply(200, transaction(), true);
      case 'wrong_amount':
        return signedReply(
          200,
          transaction({ amount: { total: total + 100, payer_total: total + 100, currency: 'CNY' } }),
        );
      case 'other_merchant':
        return signedReply(200, transaction({ mchid: '1900000000', appid: 'wx0000000000000000' }));
    }
  };

  // Refunds (WeChat Pay API v3): out_refund_no is the idempotency key; the answer is PROCESSING and the
  // result comes later by the refund notice (buildWechatpayRefundNotice), as from the real one. More than what
  // is left of the order is 403 NOT_ENOUGH... here 400 INVALID_REQUEST, as WeChat Pay answers it.
  const refundRequests: Array<Record<string, unknown>> = [];
  const refundsTaken = new Map<string, { out_trade_no: string; refund: number; notify_url: string }>();
  const domesticRefund = (body: Record<string, unknown>): FakeReply => {
    refundRequests.push(body);
    const outTradeNo = String(body.out_trade_no ?? '');
    const outRefundNo = String(body.out_refund_no ?? '');
    const amount = (body.amount ?? {}) as { refund?: number; total?: number };
    const already = [...refundsTaken.entries()]
      .filter(([number, taken]) => taken.out_trade_no === outTradeNo && number !== outRefundNo)
      .reduce((sum, [, taken]) => sum + taken.refund, 0);
    if (!refundsTaken.has(outRefundNo)) {
      if (already + (amount.refund ?? 0) > queries.amountOf(outTradeNo)) {
        return signedReply(
          400,
          JSON.stringify({ code: 'INVALID_REQUEST', message: '退款金额超过订单可退金额' }),
        );
      }
      refundsTaken.set(outRefundNo, {
        out_trade_no: outTradeNo,
        refund: amount.refund ?? 0,
        notify_url: String(body.notify_url ?? ''),
      });
    }
    return signedReply(
      200,
      JSON.stringify({
        refund_id: `50000000382019052709732${refundsTaken.size}`,
        out_refund_no: outRefundNo,
        transaction_id: '1217752501201407033233368018',
        out_trade_no: outTradeNo,
        channel: 'ORIGINAL',
        user_received_account: '招商银行信用卡0403',
        create_time: '2024-01-02T12:00:00+08:00',
        status: 'PROCESSING',
        amount: {
          total: amount.total,
          refund: amount.refund,
          payer_total: amount.total,
          payer_refund: amount.refund,
          currency: 'CNY',
        },
      }),
    );
  };

  const refundStatus = new Map<string, 'SUCCESS' | 'PROCESSING' | 'CLOSED' | 'ABNORMAL'>();
  const refundQuery = (outRefundNo: string): FakeReply => {
    const taken = refundsTaken.get(outRefundNo);
    if (!taken)
      return signedReply(404, JSON.stringify({ code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' }));
    return signedReply(
      200,
      JSON.stringify({
        refund_id: '50000000382019052709732678859',
        out_refund_no: outRefundNo,
        transaction_id: '1217752501201407033233368018',
        out_trade_no: taken.out_trade_no,
        channel: 'ORIGINAL',
        status: refundStatus.get(outRefundNo) ?? 'PROCESSING',
        create_time: '2024-01-02T12:00:00+08:00',
        amount: { refund: taken.refund, currency: 'CNY' },
      }),
    );
  };

  const answer = (request: FakeRequest): FakeReply => {
    const refundPath = /^\/v3\/refund\/domestic\/refunds\/([^/?]+)$/.exec(request.url);
    if (request.method === 'GET' && refundPath) {
      if (!authorized(request)) return signError();
      return refundQuery(decodeURIComponent(refundPath[1]!));
    }
    if (request.method === 'POST' && request.url === '/v3/refund/domestic/refunds') {
      if (!authorized(request)) return signError();
      return domesticRefund(JSON.parse(request.body) as Record<string, unknown>);
    }
    const query = QUERY_PATH.exec(request.url);
    if (request.method === 'GET' && query) {
      if (!authorized(request)) return signError();
      if (new URLSearchParams(query[2]).get('mchid') !== options.mchId) {
        return signedReply(400, JSON.stringify({ code: 'PARAM_ERROR', message: 'mchid mismatch' }));
      }
      return transactionQuery(decodeURIComponent(query[1]!));
    }
    if (request.method !== 'POST' || request.url !== '/v3/pay/transactions/native') {
      return signedReply(404, JSON.stringify({ code: 'NOT_FOUND', message: 'no such endpoint' }));
    }
    if (!authorized(request)) return signError();
    const order = JSON.parse(request.body) as {
      mchid?: string;
      out_trade_no?: string;
      amount?: { total?: number };
    };
    if (order.mchid !== options.mchId) {
      return signedReply(400, JSON.stringify({ code: 'PARAM_ERROR', message: 'mchid mismatch' }));
    }
    queries.remember(String(order.out_trade_no), order.amount?.total ?? 0);
    // WeChat Pay escapes nothing here, but the answer is verified on the raw text all the same.
    return signedReply(
      200,
      JSON.stringify({ code_url: options.codeUrl ?? 'weixin://wxpay/bizpayurl?pr=fake0001' }),
    );
  };
  const server = await startLoopbackServer(answer);
  return { ...server, apiBaseUrl: `${server.baseUrl}/`, queries, refundRequests, refundsTaken, refundStatus };
}

/** The decrypted resource of a refund notice (WeChat Pay's refund notification fields). */
export function wechatpayRefundResource(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    mchid: '1230000109',
    transaction_id: '1217752501201407033233368018',
    out_trade_no: 'ORDER0001',
    refund_id: '50000000382019052709732678859',
    out_refund_no: 'REFUND0001',
    refund_status: 'SUCCESS',
    success_time: '2024-01-02T12:00:10+08:00',
    user_received_account: '招商银行信用卡0403',
    amount: { total: 1230, refund: 1230, payer_total: 1230, payer_refund: 1230 },
    ...overrides,
  };
}

/** A refund notice as WeChat Pay POSTs it: the refund resource encrypted (AAD `refund`), the body signed. */
export function buildWechatpayRefundNotice(
  options: Omit<WechatpayCallbackOptions, 'transaction' | 'eventType'> & {
    refund: Record<string, unknown>;
    eventType?: 'REFUND.SUCCESS' | 'REFUND.ABNORMAL' | 'REFUND.CLOSED';
  },
): WechatpayCallback {
  const { refund, eventType, ...rest } = options;
  return buildWechatpayCallback({
    associatedData: 'refund',
    ...rest,
    transaction: refund,
    eventType: eventType ?? 'REFUND.SUCCESS',
  });
}

export function wechatpayTransaction(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    appid: 'wxd678efh567hg6787',
    mchid: '1230000109',
    out_trade_no: 'ORDER0001',
    transaction_id: '1217752501201407033233368018',
    trade_type: 'NATIVE',
    trade_state: 'SUCCESS',
    trade_state_desc: '支付成功',
    bank_type: 'CMC',
    attach: '',
    success_time: '2024-01-01T12:00:04+08:00',
    payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    amount: { total: 1230, payer_total: 1230, currency: 'CNY', payer_currency: 'CNY' },
    ...overrides,
  };
}

export interface WechatpayCallbackOptions {
  platformPrivateKey: KeyObject;
  platformSerial: string;
  apiV3Key: string;
  /** Unix seconds of the Wechatpay-Timestamp header. */
  timestamp: number;
  transaction?: Record<string, unknown>;
  eventType?: string;
  /** AAD used to encrypt; `declaredAssociatedData` is what the body claims (differs for a wrong-AAD case). */
  associatedData?: string;
  declaredAssociatedData?: string;
  /** Flip one ciphertext byte before signing: the signature holds, the GCM tag must not. */
  corruptCiphertext?: boolean;
  headerStyle?: 'wechatpay' | 'neutral';
  signature?: string;
  /** Applied to the body after signing (e.g. a re-serialisation by a careless proxy). */
  alterBodyAfterSigning?: (body: string) => string;
}

export interface WechatpayCallback {
  request: CallbackRequest;
  body: string;
}

/** A pay notification as WeChat Pay POSTs it: encrypted resource, body signed with the platform key. */
export function buildWechatpayCallback(options: WechatpayCallbackOptions): WechatpayCallback {
  const associatedData = options.associatedData ?? 'transaction';
  const resourceNonce = nonceString(12);
  let ciphertext = wechatpayEncrypt(
    JSON.stringify(options.transaction ?? wechatpayTransaction()),
    options.apiV3Key,
    resourceNonce,
    associatedData,
  );
  if (options.corruptCiphertext) {
    const bytes = Buffer.from(ciphertext, 'base64');
    bytes[0] = bytes[0]! ^ 0x01;
    ciphertext = bytes.toString('base64');
  }
  const signedBody = JSON.stringify({
    id: 'EV-2018022511223320873',
    create_time: '2024-01-01T12:00:05+08:00',
    resource_type: 'encrypt-resource',
    event_type: options.eventType ?? 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: {
      original_type: 'transaction',
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext,
      associated_data: options.declaredAssociatedData ?? associatedData,
      nonce: resourceNonce,
    },
  });
  const timestamp = String(options.timestamp);
  const headerNonce = nonceString();
  const signature =
    options.signature ??
    wechatpaySign(`${timestamp}\n${headerNonce}\n${signedBody}\n`, options.platformPrivateKey);
  const prefix = options.headerStyle === 'neutral' ? 'channel-b' : 'wechatpay';
  const body = options.alterBodyAfterSigning ? options.alterBodyAfterSigning(signedBody) : signedBody;
  return {
    body,
    request: {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [`${prefix}-serial`]: options.platformSerial,
        [`${prefix}-signature`]: signature,
        [`${prefix}-timestamp`]: timestamp,
        [`${prefix}-nonce`]: headerNonce,
        [`${prefix}-signature-type`]: 'WECHATPAY2-SHA256-RSA2048',
        'request-id': '08F78BB5AF0610D302A4F0C4E0FBF81C',
      },
      rawBody: Buffer.from(body, 'utf8'),
      rawQuery: '',
    },
  };
}
