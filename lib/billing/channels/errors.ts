// What a payment channel's adapter throws: settings that cannot work, and a gateway call that failed.
import { AppError } from '#lib/core/errors.ts';

/**
 * Payment channel settings that cannot work (missing, unparsable or wrongly sized credentials): shaped
 * as a validation failure of `field`. The message never repeats the value, so it is safe to log
 * and to show an administrator.
 */
export class ChannelConfigError extends AppError {
  readonly field: string;
  readonly problem: string;

  constructor(field: string, problem: string) {
    super('invalid_channel_setting', `${field}: ${problem}`, {
      data: { fields: [{ field, message: problem }] },
    });
    this.name = 'ChannelConfigError';
    this.field = field;
    this.problem = problem;
  }
}

/**
 * A payment gateway call that failed: transport error, non-success answer, or an answer whose signature
 * does not verify. Its message stays in the log (it describes the gateway's answer); `detail`
 * carries the gateway's own error code when there is one, never credentials.
 */
export class ChannelRequestError extends AppError {
  readonly provider: string;
  readonly detail: string | undefined;

  constructor(provider: string, message: string, options: { detail?: string; cause?: unknown } = {}) {
    super('channel_request_failed', `${provider}: ${message}`, {
      expose: false,
      cause: options.cause,
    });
    this.name = 'ChannelRequestError';
    this.provider = provider;
    this.detail = options.detail;
  }
}
