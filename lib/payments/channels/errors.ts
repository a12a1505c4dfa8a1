// The two failures a channel adapter raises: unusable settings and a failed or untrustworthy gateway call.

/**
 * Settings that cannot work (missing, unparsable or wrongly sized credentials). The message names the
 * setting and never repeats its value, so it is safe to log and to show an administrator.
 */
export class ChannelConfigError extends Error {
  override readonly name = 'ChannelConfigError';
  readonly field: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
  }
}

/**
 * A gateway call that failed: transport error, non-success answer, or an answer whose signature does not
 * verify. `detail` carries the gateway's own error code when there is one; no credentials are included.
 */
export class ChannelRequestError extends Error {
  override readonly name = 'ChannelRequestError';
  readonly provider: string;
  readonly detail: string | undefined;

  constructor(provider: string, message: string, options: { detail?: string; cause?: unknown } = {}) {
    super(`${provider}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.provider = provider;
    this.detail = options.detail;
  }
}
