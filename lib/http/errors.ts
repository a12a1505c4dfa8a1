// The HTTP edge's reading of the service's errors (lib/core/errors.ts): the status each name answers with,
// and the generic text a hidden message is replaced by.
import type { AppError, ErrorName } from '#lib/core/errors.ts';

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
