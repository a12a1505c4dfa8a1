// The byte pipeline's UploadError (400/413/415) as the HTTP layer's AppError, message kept as written.
import { AppError, errors } from '../http/errors.ts';
import { isUploadError, type UploadError } from './errors.ts';

export function appErrorOf(error: UploadError): AppError {
  if (error.status === 413) {
    return new AppError(413, 'payload_too_large', error.message, {
      data: error.limitBytes === undefined ? null : { limit_bytes: error.limitBytes },
      cause: error,
    });
  }
  if (error.status === 415) return errors.unsupportedMediaType(error.message);
  return errors.badRequest(error.message);
}

/** Runs pipeline work, turning its UploadErrors into AppErrors; anything else passes through. */
export async function asAppErrors<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isUploadError(error) ? appErrorOf(error) : error;
  }
}
