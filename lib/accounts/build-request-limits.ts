// Builds the account domain's request limits (per source address; per account on credential checks) over
// one throttle. Apart from build-sessions.ts: RequestLimits checks passwords, so its bundle names argon2,
// which only the groups that hash ship (infra/bundling.ts): auth (buildAccounts) and payments (key changes).
import type { Table } from '#lib/platform/db/table.ts';
import { type AccountLimits, DEFAULT_LIMITS } from './limits.ts';
import { RequestLimits } from './request-limits.ts';
import { Throttle } from './throttle.ts';

export interface RequestLimitsInput {
  table: Table;
  limits?: Partial<AccountLimits>;
}

export function buildRequestLimits(input: RequestLimitsInput) {
  const limits: AccountLimits = { ...DEFAULT_LIMITS, ...input.limits };
  const throttle = new Throttle({ table: input.table });
  return { limits, throttle, requestLimits: new RequestLimits({ throttle, limits }) };
}
