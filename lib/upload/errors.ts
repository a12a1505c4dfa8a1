// The one error type of the upload byte pipeline: a client-caused failure with the HTTP status it maps to.

export type UploadErrorStatus = 400 | 413 | 415;

/**
 * Thrown (as a rejection) by every function in lib/upload when the request or the bytes are at fault.
 * The message names the part or field first (`file: is empty`) so the HTTP layer can send it as is;
 * `limitBytes` is set on 413s so that layer can report the limit without parsing the message.
 */
export class UploadError extends Error {
  readonly status: UploadErrorStatus;
  readonly limitBytes: number | undefined;

  constructor(
    status: UploadErrorStatus,
    message: string,
    options: { cause?: unknown; limitBytes?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UploadError';
    this.status = status;
    this.limitBytes = options.limitBytes;
  }
}

export function isUploadError(value: unknown): value is UploadError {
  return value instanceof UploadError;
}

/** The one wording for "too big", used by the early content-length check, the stream and the read-back. */
export function fileTooLarge(maxBytes: number): UploadError {
  return new UploadError(413, `file: larger than ${maxBytes} bytes`, { limitBytes: maxBytes });
}
