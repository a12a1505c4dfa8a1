// Lambda entry of the `payment-callback` group: channel notifications (SPEC.md 4.3, 6), answered in each
// channel's own format. Also the function URL given to channels as their notify address.

import type { Context } from 'aws-lambda';
import { authenticate } from '#lib/auth/authenticate.ts';
import { text } from '#lib/http/envelope.ts';
import type { ApiEvent } from '#lib/http/event.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { paymentService } from '#lib/payments/index.ts';
import { matchRoute } from '#lib/routes.ts';

// Notifications are small forms or JSON documents; anything bigger is not one.
const MAX_CALLBACK_BYTES = 64 * 1024;

async function receiveCallback(request: HttpRequest): Promise<HttpResult> {
  const reply = await paymentService().handleCallback(request.params.provider!, {
    method: request.method,
    headers: request.headers,
    rawBody: request.rawBody,
    rawQuery: request.rawQuery,
  });
  return text(reply.body, reply.status, reply.contentType);
}

const callbackRoute = defineRoute({ maxBodyBytes: MAX_CALLBACK_BYTES, run: receiveCallback });

const routed = createGroupHandler(
  'payment-callback',
  {
    'POST /api/v1/payments/{provider}/callback': callbackRoute,
    'GET /api/v1/payments/{provider}/callback': callbackRoute,
  },
  { authenticate },
);

/**
 * Channels post to this function's own URL (the notify address), whose events all carry routeKey
 * `$default`: the route is found from the path, as API Gateway would have done.
 */
export function withFunctionUrlRoute(event: ApiEvent): ApiEvent {
  if (event.routeKey !== '$default') return event;
  const match = matchRoute(event.requestContext.http.method.toUpperCase(), event.rawPath);
  if (match?.route.group !== 'payment-callback') return event;
  const routeKey = `${match.route.method} ${match.route.path}`;
  return {
    ...event,
    routeKey,
    pathParameters: match.params,
    requestContext: { ...event.requestContext, routeKey },
  };
}

export const handler = (event: ApiEvent, context: Context) => routed(withFunctionUrlRoute(event), context);
