// The upload pipeline's wording of its failures; UploadError itself (status, name, shown message) lives in
// the HTTP error catalogue, so a rejection reaches the client as thrown.
import { UploadError } from '#lib/http/errors.ts';

export { UploadError, type UploadErrorStatus } from '#lib/http/errors.ts';

export function isUploadError(value: unknown): value is UploadError {
  return value instanceof UploadError;
}

/** The one wording for "too big", used by the early content-length check, the stream and the read-back. */
export function fileTooLarge(maxBytes: number): UploadError {
  return new UploadError(413, `file: larger than ${maxBytes} bytes`, { limitBytes: maxBytes });
}
