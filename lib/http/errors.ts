// The typed error catalogue: every failure a client can see, with its HTTP status and stable name.

export type ErrorName =
  | 'bad_request'
  | 'validation_failed'
  | 'malformed_json'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'internal'
  | 'not_implemented'
  | 'service_unavailable'
  | 'bad_gateway'
  /** The owner's storage quota cannot hold the upload (507, shown: `data` is `{used_bytes, quota_bytes}`). */
  | 'insufficient_storage'
  /** A payment channel's settings cannot work (400, shown: it names the setting, never its value). */
  | 'invalid_channel_setting'
  /** A payment channel's gateway failed or answered untrustworthily (502, not shown: gateway details). */
  | 'channel_request_failed'
  /** A signed token (session, challenge, cashier link) that is forged, malformed or expired (401). */
  | 'invalid_token'
  /** A genuine token of another scope, e.g. a login challenge used as a session (403). */
  | 'wrong_token_scope'
  /** A function reached for a resource its group does not declare (500, not shown: a wiring bug). */
  | 'missing_need';

/**
 * An error the service means to send. `expose` false keeps the message in the log only and sends the
 * generic text of the status instead (docs/DESIGN.md 4: a user never sees a stack trace or an internal cause).
 */
export class AppError extends Error {
  readonly status: number;
  readonly errorName: ErrorName;
  readonly expose: boolean;
  readonly data: unknown;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    errorName: ErrorName,
    message: string,
    options: { expose?: boolean; data?: unknown; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.errorName = errorName;
    this.expose = options.expose ?? status < 500;
    this.data = options.data ?? null;
    this.headers = options.headers ?? {};
  }
}

// ---- errors raised below the HTTP layer, each already carrying the answer it becomes --------------

export type UploadErrorStatus = 400 | 413 | 415;

const UPLOAD_ERROR_NAMES = {
  400: 'bad_request',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
} as const satisfies Record<UploadErrorStatus, ErrorName>;

/**
 * The upload byte pipeline's one error: the request or the bytes are at fault. The message names the part
 * or field first (`file: is empty`) and is shown as is; a 413 sets `limitBytes`, reported as `limit_bytes`.
 */
export class UploadError extends AppError {
  declare readonly status: UploadErrorStatus;
  readonly limitBytes: number | undefined;

  constructor(
    status: UploadErrorStatus,
    message: string,
    options: { cause?: unknown; limitBytes?: number } = {},
  ) {
    super(status, UPLOAD_ERROR_NAMES[status], message, {
      cause: options.cause,
      data: status === 413 && options.limitBytes !== undefined ? { limit_bytes: options.limitBytes } : null,
    });
    this.name = 'UploadError';
    this.limitBytes = options.limitBytes;
  }
}

/**
 * Payment channel settings that cannot work (missing, unparsable or wrongly sized credentials): a 400 in
 * the shape of a validation failure of `field`. The message never repeats the value, so it is safe to log
 * and to show an administrator.
 */
export class ChannelConfigError extends AppError {
  readonly field: string;
  readonly problem: string;

  constructor(field: string, problem: string) {
    super(400, 'invalid_channel_setting', `${field}: ${problem}`, {
      data: { fields: [{ field, message: problem }] },
    });
    this.name = 'ChannelConfigError';
    this.field = field;
    this.problem = problem;
  }
}

/**
 * A payment gateway call that failed: transport error, non-success answer, or an answer whose signature
 * does not verify. A 502 whose message stays in the log (it describes the gateway's answer); `detail`
 * carries the gateway's own error code when there is one, never credentials.
 */
export class ChannelRequestError extends AppError {
  readonly provider: string;
  readonly detail: string | undefined;

  constructor(provider: string, message: string, options: { detail?: string; cause?: unknown } = {}) {
    super(502, 'channel_request_failed', `${provider}: ${message}`, {
      expose: false,
      cause: options.cause,
    });
    this.name = 'ChannelRequestError';
    this.provider = provider;
    this.detail = options.detail;
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

export const errors = {
  badRequest: (message: string, data?: unknown) => new AppError(400, 'bad_request', message, { data }),
  validation: (fields: FieldProblem[]) =>
    new AppError(
      400,
      'validation_failed',
      fields.length === 1
        ? `${fields[0]!.field}: ${fields[0]!.message}`
        : `Invalid fields: ${fields.map((problem) => problem.field).join(', ')}`,
      { data: { fields } },
    ),
  malformedJson: () => new AppError(400, 'malformed_json', 'Request body is not valid JSON'),
  unauthorized: (message = 'Authentication required') => new AppError(401, 'unauthorized', message),
  forbidden: (message = 'Not allowed') => new AppError(403, 'forbidden', message),
  notFound: (message = 'Not found') => new AppError(404, 'not_found', message),
  conflict: (message: string) => new AppError(409, 'conflict', message),
  gone: (message: string) => new AppError(410, 'gone', message),
  payloadTooLarge: (limitBytes: number) =>
    new AppError(413, 'payload_too_large', `Payload too large: the limit is ${limitBytes} bytes`, {
      data: { limit_bytes: limitBytes },
    }),
  unsupportedMediaType: (message: string) => new AppError(415, 'unsupported_media_type', message),
  tooManyRequests: (retryAfterSeconds: number, message = 'Too many requests') => {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new AppError(429, 'too_many_requests', message, {
      data: { retry_after: seconds },
      headers: { 'retry-after': String(seconds) },
    });
  },
  notImplemented: (what: string) =>
    new AppError(501, 'not_implemented', `${what} is not implemented yet`, { expose: true }),
  badGateway: (message: string, cause?: unknown) =>
    new AppError(502, 'bad_gateway', message, { expose: true, cause }),
  /** A new order the channel refused or never heard of: the order is kept (failed), its id is shown. */
  channelUnavailable: (orderId: string, provider: string) =>
    new AppError(502, 'bad_gateway', 'payment channel unavailable', {
      expose: true,
      data: { order_id: orderId, provider },
    }),
  serviceUnavailable: (message: string, cause?: unknown) =>
    new AppError(503, 'service_unavailable', message, { expose: true, cause }),
  /** The upload does not fit the owner's quota (docs/DESIGN.md 11); nothing was stored. */
  insufficientStorage: (usedBytes: number, quotaBytes: number) =>
    new AppError(507, 'insufficient_storage', 'storage quota exceeded', {
      expose: true,
      data: { used_bytes: usedBytes, quota_bytes: quotaBytes },
    }),
} as const;

const GENERIC_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
  501: 'Not implemented',
  502: 'Bad gateway',
  503: 'Service unavailable',
  507: 'Insufficient storage',
};

export function genericMessage(status: number): string {
  return GENERIC_MESSAGES[status] ?? (status >= 500 ? 'Internal server error' : 'Request failed');
}
