// channel_b's signed messages (WeChat Pay API v3): the Wechatpay-* headers, the 5-minute window, the RSA
// signature over `timestamp\nnonce\nbody\n`, the AES-256-GCM callback resource, and the reply it expects.
import { createDecipheriv, createVerify, type KeyObject } from 'node:crypto';
import { ChannelRequestError } from './errors.ts';
import type { CallbackReply, CallbackVerdict } from './types.ts';

const PROVIDER = 'channel_b';
const MAX_CLOCK_SKEW_SECONDS = 300;
/** AEAD_AES_256_GCM of the callback resource: the 16-byte tag follows the ciphertext (docs/PAYMENTS-GUIDE.md). */
const GCM_TAG_BYTES = 16;

export interface SignedMessageHeaders {
  signature: string;
  timestamp: string;
  nonce: string;
  serial: string;
  signatureType: string | undefined;
}

/** 200 with an empty body tells WeChat Pay to stop; any 4xx makes it retry (docs/PAYMENTS-GUIDE.md 2.7). */
export function acknowledgeWechatpay(verdict: CallbackVerdict): CallbackReply {
  if (verdict.kind === 'rejected') {
    return {
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({ code: 'FAIL', message: verdict.reason }),
    };
  }
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: '' };
}

// The brand's header names and the neutral ones (docs/DESIGN.md 7) are both accepted; the brand's win on a clash.
export function readSignedMessageHeaders(headers: Record<string, string>): SignedMessageHeaders | undefined {
  const read = (suffix: string): string | undefined =>
    headers[`wechatpay-${suffix}`] ?? headers[`channel-b-${suffix}`];
  const signature = read('signature');
  const timestamp = read('timestamp');
  const nonce = read('nonce');
  const serial = read('serial');
  if (!signature || !timestamp || !nonce || !serial) return undefined;
  return { signature, timestamp, nonce, serial, signatureType: read('signature-type') };
}

export function isFresh(timestamp: string, now: Date): boolean {
  if (!/^\d{1,12}$/.test(timestamp)) return false;
  const skewSeconds = Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp));
  return skewSeconds <= MAX_CLOCK_SKEW_SECONDS;
}

/** SHA256-RSA over `timestamp\nnonce\nbody\n` (the signed message of an answer or a callback). */
export function rsaVerifies(headers: SignedMessageHeaders, bodyText: string, publicKey: KeyObject): boolean {
  try {
    return createVerify('sha256WithRSAEncryption')
      .update(`${headers.timestamp}\n${headers.nonce}\n${bodyText}\n`)
      .verify(publicKey, headers.signature, 'base64');
  } catch {
    return false;
  }
}

/** AEAD_AES_256_GCM with the APIv3 key: base64 of ciphertext + tag; throws unless the tag verifies. */
export function decryptResource(
  ciphertext: string,
  key: Buffer,
  nonce: string,
  associatedData: string,
): string {
  const sealed = Buffer.from(ciphertext, 'base64');
  if (sealed.length < GCM_TAG_BYTES) throw new Error('resource shorter than its tag');
  const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
  decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
  decipher.setAAD(Buffer.from(associatedData));
  const payload = sealed.subarray(0, sealed.length - GCM_TAG_BYTES);
  return Buffer.concat([decipher.update(payload), decipher.final()]).toString('utf8');
}

interface AxiosHeaderReader {
  get?: (name: string) => unknown;
  [name: string]: unknown;
}

/** Same checks as the plugin's response verifier, for the one platform key that has no configured serial. */
export function verifyAnswerWithUnnamedKey(publicKey: KeyObject) {
  return function verifyAnswer(this: unknown, data: unknown, headers: AxiosHeaderReader, status?: number) {
    if (status !== undefined && (status < 200 || status >= 300)) return data;
    const read = (name: string): string | undefined => {
      const value = typeof headers.get === 'function' ? headers.get(name) : headers[name.toLowerCase()];
      return typeof value === 'string' ? value : undefined;
    };
    const signature = read('Wechatpay-Signature');
    const timestamp = read('Wechatpay-Timestamp');
    const nonce = read('Wechatpay-Nonce');
    const bodyText = typeof data === 'string' ? data : '';
    if (!signature || !timestamp || !nonce || !isFresh(timestamp, new Date())) {
      throw new ChannelRequestError(PROVIDER, 'answer signature headers missing or stale');
    }
    const headersForCheck = { signature, timestamp, nonce, serial: '', signatureType: undefined };
    if (!rsaVerifies(headersForCheck, bodyText, publicKey)) {
      throw new ChannelRequestError(PROVIDER, 'answer signature does not verify');
    }
    return data;
  };
}

export function parseJsonAnswer(data: unknown): unknown {
  if (typeof data !== 'string' || data === '') return data;
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}
