// A fake EPay (彩虹易支付) mapi.php and notifications signed the EPay V1 MD5 way.
import { createHash } from 'node:crypto';
import type { CallbackRequest } from '../../../lib/payments/channels/types.ts';
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

export interface FakeEpay extends LoopbackServer {
  mapiUrl: string;
  receivedParams(): Array<Record<string, string>>;
}

function formParams(request: FakeRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(request.body));
}

export async function startFakeEpay(options: FakeEpayOptions): Promise<FakeEpay> {
  const answer = (request: FakeRequest): FakeReply => {
    const json = (body: Record<string, unknown>): FakeReply => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
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
