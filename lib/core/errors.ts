// The typed error catalogue: every failure a client can see, by its stable name. Domains and the data layer
// throw these; the HTTP edge (lib/http/errors.ts) alone knows which status each name answers with.

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
  /** Held for review or refused by the operator's block list (docs/MODERATION.md): 451. */
  | 'unavailable_for_legal_reasons'
  | 'payload_too_large'
  | 'unsupported_media_type'
  /** Well-formed input the service will not process, e.g. an image over the renderer's pixel limit. */
  | 'unprocessable'
  | 'too_many_requests'
  | 'internal'
  | 'not_implemented'
  | 'service_unavailable'
  | 'bad_gateway'
  /** The owner's storage quota cannot hold the upload (shown: `data` is `{used_bytes, quota_bytes}`). */
  | 'insufficient_storage'
  /** A payment channel's settings cannot work (shown: it names the setting, never its value). */
  | 'invalid_channel_setting'
  /** A payment channel's gateway failed or answered untrustworthily (not shown: gateway details). */
  | 'channel_request_failed'
  /** A signed token (session, challenge, cashier link) that is forged, malformed or expired . */
  | 'invalid_token'
  /** A genuine token of another scope, e.g. a login challenge used as a session . */
  | 'wrong_token_scope'
  /** A function reached for a resource its group does not declare (not shown: a wiring bug). */
  | 'missing_need';

// Names whose message stays in the log unless the error says otherwise: the service's own faults.
const HIDDEN_BY_DEFAULT: ReadonlySet<ErrorName> = new Set([
  'internal',
  'missing_need',
  'channel_request_failed',
]);

// Names that say the service could not do its part, as opposed to refusing the caller's request.
const SERVICE_FAULTS: ReadonlySet<ErrorName> = new Set([
  'internal',
  'missing_need',
  'not_implemented',
  'bad_gateway',
  'channel_request_failed',
  'service_unavailable',
  'insufficient_storage',
]);

/**
 * An error the service means to send. `expose` false keeps the message in the log only and sends the
 * generic text of its status instead (docs/DESIGN.md 4: a user never sees a stack trace or an internal
 * cause). `retryAfterSeconds` tells the caller when to try again (the edge sends it as Retry-After).
 */
export class AppError extends Error {
  readonly errorName: ErrorName;
  readonly expose: boolean;
  readonly data: unknown;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    errorName: ErrorName,
    message: string,
    options: { expose?: boolean; data?: unknown; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.errorName = errorName;
    this.expose = options.expose ?? !HIDDEN_BY_DEFAULT.has(errorName);
    this.data = options.data ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

export const errors = {
  badRequest: (message: string, data?: unknown) => new AppError('bad_request', message, { data }),
  validation: (fields: FieldProblem[]) =>
    new AppError(
      'validation_failed',
      fields.length === 1
        ? `${fields[0]!.field}: ${fields[0]!.message}`
        : `Invalid fields: ${fields.map((problem) => problem.field).join(', ')}`,
      { data: { fields } },
    ),
  malformedJson: () => new AppError('malformed_json', 'Request body is not valid JSON'),
  unauthorized: (message = 'Authentication required') => new AppError('unauthorized', message),
  forbidden: (message = 'Not allowed') => new AppError('forbidden', message),
  notFound: (message = 'Not found') => new AppError('not_found', message),
  conflict: (message: string) => new AppError('conflict', message),
  gone: (message: string) => new AppError('gone', message),
  unavailableForLegalReasons: (message: string) => new AppError('unavailable_for_legal_reasons', message),
  payloadTooLarge: (limitBytes: number) =>
    new AppError('payload_too_large', `body: larger than ${readableLimit(limitBytes)}`, {
      data: { limit_bytes: limitBytes },
    }),
  unsupportedMediaType: (message: string) => new AppError('unsupported_media_type', message),
  unprocessable: (message: string, data?: unknown) => new AppError('unprocessable', message, { data }),
  tooManyRequests: (retryAfterSeconds: number, message = 'Too many requests') => {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new AppError('too_many_requests', message, {
      data: { retry_after: seconds },
      retryAfterSeconds: seconds,
    });
  },
  notImplemented: (what: string) => new AppError('not_implemented', `${what} is not implemented yet`),
  badGateway: (message: string, cause?: unknown) => new AppError('bad_gateway', message, { cause }),
  /** A new order the channel refused or never heard of: the order is kept (failed), its id is shown. */
  channelUnavailable: (orderId: string, provider: string) =>
    new AppError('bad_gateway', 'payment channel unavailable', {
      data: { order_id: orderId, provider },
    }),
  serviceUnavailable: (message: string, cause?: unknown) =>
    new AppError('service_unavailable', message, { cause }),
  /** The upload does not fit the owner's quota (docs/DESIGN.md 11); nothing was stored. */
  insufficientStorage: (usedBytes: number, quotaBytes: number) =>
    new AppError('insufficient_storage', 'storage quota exceeded', {
      data: { used_bytes: usedBytes, quota_bytes: quotaBytes },
    }),
} as const;

/** A refusal of the caller's request (bad input, no right, a conflict), not a fault of the service. */
export function isRefusal(error: AppError): boolean {
  return !SERVICE_FAULTS.has(error.errorName);
}

const MIB = 1024 * 1024;

/** A limit as people read it: `4 MiB (4194304 bytes)` for whole mebibytes (the settings' usual values), else bytes. */
export function readableLimit(bytes: number): string {
  return bytes >= MIB && bytes % MIB === 0 ? `${bytes / MIB} MiB (${bytes} bytes)` : `${bytes} bytes`;
}
