// Calls the payments and payment-callback handlers in process, as API Gateway would, and watches the log.
import { handler as callbackHandler } from '#functions/payment-callback/handler.ts';
import { handler as paymentsHandler } from '#functions/payments/handler.ts';
import type { CallbackRequest } from '#lib/billing/channels/types.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { drainOutbox } from '#test/support/outbox.ts';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience over the envelope's data
  json: any;
}

export async function call(
  method: string,
  path: string,
  options: { body?: object | string; headers?: Record<string, string>; sourceIp?: string } = {},
): Promise<Answer> {
  const event = apiEvent({
    method,
    path,
    ...(options.body === undefined ? {} : { body: options.body }),
    headers: options.headers ?? {},
    ...(options.sourceIp ? { sourceIp: options.sourceIp } : {}),
  });
  const group = path.startsWith('/api/v1/payments/') ? callbackHandler : paymentsHandler;
  const result = await group(event, lambdaContext);
  const text = result.isBase64Encoded
    ? Buffer.from(result.body ?? '', 'base64').toString('utf8')
    : (result.body ?? '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: result.statusCode ?? 0,
    headers: (result.headers ?? {}) as Record<string, string>,
    text,
    json,
  };
}

/** Sends a callback built by the fake-gateway helpers to the real callback route. */
export function deliverCallback(provider: string, request: CallbackRequest): Promise<Answer> {
  const path = `/api/v1/payments/${provider}/callback${request.rawQuery ? `?${request.rawQuery}` : ''}`;
  return call(request.method, path, {
    headers: request.headers,
    ...(request.rawBody.length > 0 ? { body: request.rawBody.toString('utf8') } : {}),
  });
}

export interface LogLine {
  level: string;
  message: string;
  [field: string]: unknown;
}

/** Captures every log line of this test file (and keeps the test output quiet). */
export function captureLog(): LogLine[] {
  const lines: LogLine[] = [];
  configureLogging({ level: 'info', sink: (line) => lines.push(JSON.parse(line) as LogLine) });
  return lines;
}

/**
 * How many order.paid events (the local publisher's log lines) were published for this order, once the
 * outbox drain has delivered everything settled so far (test/support/outbox.ts).
 */
export async function paidEvents(lines: LogLine[], orderId: string): Promise<number> {
  await drainOutbox();
  return lines.filter(
    (line) => line.message === 'event' && (line.detail as { order_id?: string })?.order_id === orderId,
  ).length;
}

export {
  A_APP_ID,
  B_API_V3_KEY,
  B_MCH_ID,
  B_PLATFORM_SERIAL,
  C_KEY,
  C_PID,
} from '#test/support/fake-gateways/index.ts';
