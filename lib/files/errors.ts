// The upload pipeline's one error and its wording of "too big": the request or the bytes are at fault.
import { AppError, type ErrorName, readableLimit } from '#lib/core/errors.ts';

export type UploadErrorName = Extract<
  ErrorName,
  'bad_request' | 'payload_too_large' | 'unsupported_media_type'
>;

/**
 * The message names the part or field first (`file: is empty`) and is shown as is; a `payload_too_large`
 * sets `limitBytes`, reported as `limit_bytes`.
 */
export class UploadError extends AppError {
  declare readonly errorName: UploadErrorName;
  readonly limitBytes: number | undefined;

  constructor(
    errorName: UploadErrorName,
    message: string,
    options: { cause?: unknown; limitBytes?: number } = {},
  ) {
    super(errorName, message, {
      cause: options.cause,
      data:
        errorName === 'payload_too_large' && options.limitBytes !== undefined
          ? { limit_bytes: options.limitBytes }
          : null,
    });
    this.name = 'UploadError';
    this.limitBytes = options.limitBytes;
  }
}

/** The one wording for "too big", used by the early content-length check, the stream and the read-back. */
export function fileTooLarge(maxBytes: number, hint = ''): UploadError {
  return new UploadError('payload_too_large', `file: larger than ${readableLimit(maxBytes)}${hint}`, {
    limitBytes: maxBytes,
  });
}

/** A direct upload's "too big", whatever refused it (the local server, the handler, the stream): and where larger files go. */
export const directUploadTooLarge = (maxBytes: number) =>
  fileTooLarge(maxBytes, '; larger files go through the presigned upload (POST /api/v1/upload/presign)');
