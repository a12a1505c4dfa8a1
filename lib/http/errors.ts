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
  | 'bad_gateway';

/**
 * An error the service means to send. `expose` false keeps the message in the log only and sends the
 * generic text of the status instead (DESIGN.md 4: a user never sees a stack trace or an internal cause).
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
  serviceUnavailable: (message: string, cause?: unknown) =>
    new AppError(503, 'service_unavailable', message, { expose: true, cause }),
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
};

export function genericMessage(status: number): string {
  return GENERIC_MESSAGES[status] ?? (status >= 500 ? 'Internal server error' : 'Request failed');
}
