// One signed POST to a webhook endpoint: a short timeout over the whole exchange, redirects never followed
// (a 3xx is an answer like any other: not a success), the target's addresses checked at connect time, and
// only the first RESPONSE_PREFIX bytes of the answer kept.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkTargetUrl, guardedLookup, type TargetPolicy } from './addresses.ts';

const RESPONSE_PREFIX = 256;

export interface PostAnswer {
  status: number | null;
  error: string | null;
  duration_ms: number;
  response: string;
}

export interface SignedPost {
  url: string;
  body: string;
  /** The Webhook-Signature header's value (deliveries.ts signatureHeader). */
  signature: string;
  policy: TargetPolicy;
  timeoutMs: number;
}

export async function postSigned(post: SignedPost): Promise<PostAnswer> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    // Checked again: a literal address in the URL is connected to without a lookup.
    url = new URL(checkTargetUrl(post.url, post.policy));
  } catch (error) {
    return { status: null, error: (error as Error).message, duration_ms: took(), response: '' };
  }
  return new Promise<PostAnswer>((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(post.policy),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'webhooks/1',
        'webhook-signature': post.signature,
      },
    });
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${post.timeoutMs} ms`)),
      post.timeoutMs,
    );
    const done = (answer: Omit<PostAnswer, 'duration_ms'>) => {
      clearTimeout(timer);
      resolve({ ...answer, duration_ms: took() });
    };
    request.on('error', (error) => done({ status: null, error: error.message, response: '' }));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const finish = () => {
        done({
          status: response.statusCode ?? null,
          error: null,
          response: Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX).toString('utf8'),
        });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= RESPONSE_PREFIX) finish();
      });
      response.on('end', finish);
      response.on('error', finish);
    });
    request.end(post.body);
  });
}
