// The middy step that refuses a banned viewer (docs/ABUSE.md "Bans"): right after the front door, which has
// put the viewer's address in the request, and before any routing or authentication.
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { BanCheck } from '#lib/accounts/ban-cache.ts';
import { errors } from '#lib/core/errors.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import type { ApiEvent, ApiResult } from './event.ts';

export type { BanCheck };

/** Without a check (in-process tests of the chain) it does nothing. */
export function banCheck(check?: BanCheck): MiddlewareObj<ApiEvent, ApiResult, Error, Context> {
  return {
    before: async (request) => {
      if (!check) return;
      const ban = await check(request.event.requestContext.http.sourceIp);
      if (!ban) return;
      recordMetric('BannedRequest');
      throw errors.forbidden(`This address is banned: ${ban.reason}`);
    },
  };
}
