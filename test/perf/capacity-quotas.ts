// The account quotas a prod deploy needs at the target (docs/CAPACITY.md "Account quotas to request"): each
// AWS default beside what the capacity model (infra/capacity.ts) needs of it with headroom.
import { GROUP_NEEDS } from '#functions/needs.ts';
import {
  API_GATEWAY_ACCOUNT_RPS,
  apiPerSecond,
  DEFAULT_ACCOUNT_CONCURRENCY,
  dynamoUnitsPerSecond,
  HEADROOM,
  lambdaQuotaToRequest,
  PATHS,
  type PathLoad,
  prodThrottle,
  roundUp,
  TARGET,
} from '#infra/capacity.ts';

/** CloudFront's default data transfer rate per distribution, and its default requests per second. */
export const CLOUDFRONT_DEFAULT_GBPS = 150;
export const CLOUDFRONT_DEFAULT_RPS = 250_000;
/** DynamoDB's default table-level throughput for an on-demand table, reads and writes alike. */
export const DYNAMODB_TABLE_DEFAULT_UNITS = 40_000;
/** KMS's symmetric cryptographic operations quota in most regions (some have more). */
export const KMS_SYMMETRIC_DEFAULT_RPS = 5_500;
/** Lambda scales each function out by at most 1,000 executions every 10 seconds. */
export const LAMBDA_SCALE_OUT_PER_SECOND = 100;

/** Gigabits per second the viral image alone sends at the target. */
export const viralImageGbps = (): number =>
  (TARGET.viralImageViewsPerSecond * TARGET.viralImageBytes * 8) / 1e9;

/** CloudFront's data transfer rate per distribution to ask for: the viral image with headroom, by 100 Gbps. */
export const cloudfrontGbpsToRequest = (): number => roundUp(viralImageGbps() * HEADROOM, 100);

/**
 * KMS Decrypt runs once per container start (the master key unseals the signing and pepper keys), never per
 * request: its fastest rate is every function scaling out at once.
 */
export const kmsDecryptPerSecond = (functions: number): number => functions * LAMBDA_SCALE_OUT_PER_SECOND;

export interface QuotaRow {
  quota: string;
  defaultValue: string;
  askFor: string;
  /** What the target needs of it with headroom, in the quota's unit. */
  needed: number;
}

/**
 * The renewal reminders' sending rate beside the paths' mail (`billing.reminders_per_second`'s default, 14):
 * 1 million reminders a day need 11.6 a second on average, and a run sends at that rate while any are due.
 */
export const REMINDER_MAILS_PER_SECOND = 14;

const NOTHING = 'nothing at the target';
const n = (value: number) => value.toLocaleString('en-US');

/** Every quota the doc lists, in its order. */
export function accountQuotas(paths: readonly PathLoad[] = PATHS): QuotaRow[] {
  const stage = prodThrottle(paths).rateLimit;
  const cdnRequests = (TARGET.viralImageViewsPerSecond + apiPerSecond(paths)) * HEADROOM;
  const units = dynamoUnitsPerSecond(paths);
  const tableNeed = Math.max(units.rru, units.wru) * HEADROOM;
  // Only the functions that hold the master key unseal at start (render and files do not).
  const keyHolders = new Set(paths.map((path) => path.group).filter((g) => GROUP_NEEDS[g].masterKey));
  const kms = kmsDecryptPerSecond(keyHolders.size) * HEADROOM;
  const mailsPerSecond =
    paths.reduce((sum, path) => sum + path.perSecond * (path.mails ?? 0), 0) + REMINDER_MAILS_PER_SECOND;
  const mails = roundUp(mailsPerSecond * HEADROOM, 10);
  return [
    {
      quota: 'Lambda: Concurrent executions',
      defaultValue: n(DEFAULT_ACCOUNT_CONCURRENCY),
      askFor: n(lambdaQuotaToRequest(paths)),
      needed: lambdaQuotaToRequest(paths),
    },
    {
      quota: 'API Gateway: throttle per account and region',
      defaultValue: `${n(API_GATEWAY_ACCOUNT_RPS)} requests/s (burst 5,000)`,
      askFor: stage <= API_GATEWAY_ACCOUNT_RPS ? NOTHING : `${n(stage)} requests/s`,
      needed: stage,
    },
    {
      quota: 'CloudFront: data transfer rate per distribution',
      defaultValue: `${CLOUDFRONT_DEFAULT_GBPS} Gbps`,
      askFor: `${n(cloudfrontGbpsToRequest())} Gbps`,
      needed: cloudfrontGbpsToRequest(),
    },
    {
      quota: 'CloudFront: requests per second per distribution',
      defaultValue: n(CLOUDFRONT_DEFAULT_RPS),
      askFor: cdnRequests <= CLOUDFRONT_DEFAULT_RPS ? NOTHING : n(roundUp(cdnRequests, 10_000)),
      needed: cdnRequests,
    },
    {
      quota: 'DynamoDB: table-level on-demand throughput',
      defaultValue: `${n(DYNAMODB_TABLE_DEFAULT_UNITS)} read and ${n(DYNAMODB_TABLE_DEFAULT_UNITS)} write request units/s per table`,
      askFor:
        tableNeed <= DYNAMODB_TABLE_DEFAULT_UNITS ? NOTHING : `${n(roundUp(tableNeed, 10_000))} units/s`,
      needed: tableNeed,
    },
    {
      quota: 'KMS: cryptographic operations (symmetric) request rate, for `Decrypt`',
      defaultValue: `${n(KMS_SYMMETRIC_DEFAULT_RPS)}/s in most regions, more in some`,
      askFor: kms <= KMS_SYMMETRIC_DEFAULT_RPS ? NOTHING : `${n(roundUp(kms, 1000))}/s`,
      needed: kms,
    },
    {
      quota: 'SES: sending rate (and daily quota)',
      defaultValue: 'sandbox: 1/s and 200 a day; production access: a rate set per account',
      askFor: `${n(mails)}/s, and a daily quota for the launch's sign-ups`,
      needed: mails,
    },
  ];
}
