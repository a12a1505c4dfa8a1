// The HTTP edge's reading of the service's errors (lib/core/errors.ts): the status each name answers with,
// the generic text a hidden message is replaced by, and the envelope any error becomes.
import { AppError, type ErrorName } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import { failure } from './envelope.ts';
import { isServerFailure } from './observability.ts';
import type { HttpResult } from './types.ts';

const STATUS_BY_NAME: Readonly<Record<ErrorName, number>> = {
  bad_request: 400,
  validation_failed: 400,
  malformed_json: 400,
  invalid_channel_setting: 400,
  unauthorized: 401,
  invalid_token: 401,
  forbidden: 403,
  wrong_token_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  unavailable_for_legal_reasons: 451,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  missing_need: 500,
  not_implemented: 501,
  bad_gateway: 502,
  channel_request_failed: 502,
  service_unavailable: 503,
  insufficient_storage: 507,
};

export function statusOf(error: AppError): number {
  return STATUS_BY_NAME[error.errorName];
}

const GENERIC_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  451: 'Unavailable for legal reasons',
  500: 'Internal server error',
  501: 'Not implemented',
  502: 'Bad gateway',
  503: 'Service unavailable',
  507: 'Insufficient storage',
};

export function genericMessage(status: number): string {
  return GENERIC_MESSAGES[status] ?? (status >= 500 ? 'Internal server error' : 'Request failed');
}

/** Every error becomes an envelope; only AppErrors marked `expose` show their message. */
export function errorResult(error: unknown): HttpResult {
  if (error instanceof AppError) {
    const status = statusOf(error);
    // Other 5xx carry a cause worth reading.
    if (isServerFailure(status)) log.error('request failed', { error, status });
    const message = error.expose ? error.message : genericMessage(status);
    return {
      kind: 'json',
      status,
      body: failure(status, message, error.expose ? error.data : null),
      headers:
        error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) },
    };
  }
  if (isTransient(error)) {
    log.warn('dependency busy or unreachable', { error });
    return {
      kind: 'json',
      status: 503,
      body: failure(503, 'Service is busy; try again shortly', { retry_after: 1 }),
      headers: { 'retry-after': '1' },
    };
  }
  log.error('unexpected error', { error });
  return { kind: 'json', status: 500, body: failure(500, genericMessage(500)) };
}

// Failures of a dependency that a retry may cure: the caller hears 503 + Retry-After, not a 500 "bug".
const TRANSIENT_ERRORS = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'SlowDown',
  'RequestTimeout',
  'TimeoutError',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
]);

function isTransient(error: unknown): boolean {
  const candidate = error as { name?: string; code?: string; $retryable?: unknown; $fault?: string } | null;
  if (!candidate || typeof candidate !== 'object') return false;
  return (
    TRANSIENT_ERRORS.has(candidate.name ?? '') ||
    TRANSIENT_ERRORS.has(candidate.code ?? '') ||
    candidate.$retryable !== undefined ||
    // An AWS service's own failure (e.g. S3 InternalError): theirs, not a bug of ours; a retry may help.
    candidate.$fault === 'server'
  );
}
