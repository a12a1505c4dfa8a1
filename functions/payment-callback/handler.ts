// Lambda entry of the `payment-callback` group: channel notifications (docs/SPEC.md 4.3, 6), answered in each
// channel's own format. Also the function URL given to channels as their notify address.

import { text } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute, type EntryOptions, noCredentials } from '#lib/http/handler.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type PaymentCallbackDeps, paymentCallbackDeps } from './deps.ts';
import { needs } from './needs.ts';

// Notifications are small forms or JSON documents; anything bigger is not one.
const MAX_CALLBACK_BYTES = 64 * 1024;

/** The payment-callback group over the given dependencies. */
export function createPaymentCallbackHandler(
  deps: () => PaymentCallbackDeps,
  options: Pick<EntryOptions, 'frontDoor' | 'bans'> = {},
) {
  const receiveCallback = async (request: HttpRequest): Promise<HttpResult> => {
    const reply = await deps().callbacks.handleCallback(request.params.provider!, {
      method: request.method,
      headers: request.headers,
      rawBody: request.rawBody,
      rawQuery: request.rawQuery,
    });
    return text(reply.body, reply.status, reply.contentType);
  };
  const callbackRoute = defineRoute({
    maxBodyBytes: MAX_CALLBACK_BYTES,
    summary: 'A channel’s payment notification, verified and answered in the channel’s own protocol.',
    requestContentType: 'application/x-www-form-urlencoded',
    responseContentType: 'text/plain',
    responseDescription:
      '`success` (channel_a, channel_c) or an empty 200 (channel_b); refusals are 4xx `fail` or channel_b\'s `{"code":"FAIL","message"}`.',
    run: receiveCallback,
  });

  // Also reached through its Lambda function URL (routeKey `$default`): the chain routes those by path.
  // Every route proves itself by the channel's signature, so no session machinery is loaded.
  return createGroupHandler(
    'payment-callback',
    {
      'POST /api/v1/payments/{provider}/callback': callbackRoute,
      'GET /api/v1/payments/{provider}/callback': callbackRoute,
    },
    // Through API Gateway only with the CDN's proof; at its function URL the signature is the proof.
    {
      authenticate: noCredentials,
      frontDoor: options.frontDoor,
      bans: options.bans,
      functionUrlIsFrontDoor: true,
    },
  );
}

export const handler = createPaymentCallbackHandler(paymentCallbackDeps, {
  frontDoor: groupFrontDoor('payment-callback', needs, config),
  bans: groupBans('payment-callback', needs, config),
});
