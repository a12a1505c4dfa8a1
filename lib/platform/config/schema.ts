// The one schema of the service's settings (docs/DESIGN.md 3): dotted names as docs/SPEC.md writes them.
import * as z from '#lib/platform/zod.ts';
import {
  channelA,
  channelB,
  channelC,
  flag,
  optionalText,
  optionalUrl,
  rateLimit,
  section,
  url,
  wholeNumber,
} from './parts.ts';
import { signInProviders } from './sign-in-providers.ts';

export type { SignInProviderSettings } from './sign-in-providers.ts';

export const PROVIDERS = ['manual', 'mock', 'channel_a', 'channel_b', 'channel_c'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** docs/DESIGN.md 15: the widths (and heights) and qualities a rendition may ask for by default. */
export const DEFAULT_IMAGE_WIDTHS = [
  16, 32, 48, 64, 96, 128, 192, 256, 320, 384, 480, 640, 750, 828, 960, 1080, 1200, 1440, 1920, 2048, 2560,
  3840,
] as const;
export const DEFAULT_IMAGE_QUALITIES = [50, 75, 90, 100] as const;
/** docs/IMAGES.md: the renditions anyone may ask for (`?p=<name>`), each a query of the above. */
export const DEFAULT_IMAGE_PRESETS = {
  thumb: 'w=480&q=75&f=webp',
  small: 'w=960&q=75&f=webp',
  medium: 'w=1200&q=75&f=webp',
  large: 'w=1920&q=75&f=webp',
  avatar: 'w=128&h=128&fit=cover&q=75&f=webp',
} as const;

export const UPLOAD_TYPES = ['png', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico'] as const;

/** The front door reads its secret from Secrets Manager only when it is told which one. */
function namesItsSecret(door: { provider: string; secret_id?: string | undefined }): boolean {
  return door.provider !== 'secrets-manager' || door.secret_id !== undefined;
}

/** `base_url` is joined with paths: no trailing slash. */
function withoutTrailingSlashes(value: string): string {
  return value.replace(/\/+$/, '');
}

/** A host a Referer allow-list names: `example.com`, or `*.example.com` for its subdomains (lower case). */
export const REFERER_HOST = /^(\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+$/;
export const refererHosts = z
  .array(
    z
      .string()
      .check(z.maxLength(253), z.regex(REFERER_HOST, 'must be a host like example.com or *.example.com')),
  )
  .check(z.maxLength(100));

/** A moderation score threshold, 0..1; null: never (nothing held, or nothing flagged). */
const threshold = z.nullable(z.number().check(z.minimum(0), z.maximum(1)));

/** An upload rate's counts (lib/files/upload-rate.ts); 0: no limit. */
const rateCount = z.number().check(z.int(), z.minimum(0), z.maximum(2 ** 50));
const uploadRate = {
  files_per_minute: rateCount,
  files_per_day: rateCount,
  bytes_per_minute: rateCount,
  bytes_per_day: rateCount,
};

export const configSchema = z.object({
  stage: z._default(
    z.string().check(z.regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a short lower-case name')),
    'local',
  ),
  base_url: z.pipe(z._default(url, 'http://localhost:3000'), z.transform(withoutTrailingSlashes)),
  // Whether this deployment serves real users (docs/DEPLOYMENT.md "Production guards"): no mock cashier,
  // https gateways only, the synth's guards. Absent: a stage named prod or production is (isProduction).
  deployment: section({ production: z.optional(z.boolean()) }),
  port: wholeNumber(0, 65535, 3000),
  data_dir: z._default(z.string().check(z.minLength(1)), '.data'),
  table_name: z._default(
    z.string().check(z.regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a valid DynamoDB table name')),
    'service',
  ),
  // Shards of each listing of everything (lib/platform/db/shards.ts, docs/CAPACITY.md): a page reads them
  // all at once. Change it only with `npm run migrate:shards` run after (docs/DEPLOYMENT.md).
  listing_shards: wholeNumber(1, 64, 16),
  // The index each kind of listing is read from (lib/platform/db/keys.ts). Set only by the deployment while
  // an existing table moves to the current indexes (infra.legacy_indexes, docs/DEPLOYMENT.md "Moving to
  // the sharded listings"): the older index answers until the new one is built.
  table_indexes: section({
    owner: z._default(z.enum(['owner', 'gsi1']), 'owner'),
    listing: z._default(z.enum(['listing', 'gsi2']), 'listing'),
    // The reconciler's schedule has no older index: until it is built its listing reads as empty (the
    // migration then puts every pending channel order on it).
    due: z._default(z.enum(['due', 'none']), 'due'),
  }),
  bucket_name: z._default(
    z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')),
    'service-files',
  ),
  // The CDN's access logs (docs/UPLOADS.md "Bandwidth"); locally a bucket of that name in s3rver.
  access_log_bucket_name: z._default(
    z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')),
    'service-access-logs',
  ),
  aws: section({
    region: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
    // Set only when running against the local stand-ins (DynamoDB Local, s3rver, local SES).
    dynamodb_endpoint: optionalUrl,
    s3_endpoint: optionalUrl,
    ses_endpoint: optionalUrl,
    // No local KMS, EventBridge or CloudFront exists; the deployed-shape test serves their protocols itself.
    kms_endpoint: optionalUrl,
    events_endpoint: optionalUrl,
    cloudfront_endpoint: optionalUrl,
    secrets_manager_endpoint: optionalUrl,
    event_bus_name: optionalText,
  }),
  master_key: section({
    // kms: envelope encryption with this KMS key; local: 32 random bytes kept in data_dir.
    provider: z._default(z.enum(['local', 'kms']), 'local'),
    kms_key_id: optionalText,
  }),
  // The CDN's proof on every API request (lib/http/front-door.ts, docs/DEPLOYMENT.md). Set by the deployment
  // or the local runner from the `frontDoor` need: secrets-manager names the secret the stack generates;
  // local reads origin-secret.json in data_dir, which the local server (playing the CDN) sends; none (the
  // default, in-process tests) checks nothing.
  front_door: z.prefault(
    z
      .object({
        provider: z._default(z.enum(['none', 'local', 'secrets-manager']), 'none'),
        secret_id: optionalText,
        // How long a read value is trusted: a rotated secret is picked up within this, without a redeploy.
        cache_seconds: wholeNumber(1, 3600, 300),
      })
      // Caught once at start, not as a 503 on every request.
      .check(
        z.refine(namesItsSecret, {
          message: 'is required when front_door.provider is secrets-manager',
          path: ['secret_id'],
        }),
      ),
    {},
  ),
  http: section({
    // Browser origins the LOCAL server answers CORS for (default: any http://localhost:<port>); in AWS
    // CORS is the API Gateway's, from the stage's infra.cors_origins.
    cors_origins: z.optional(
      z.array(
        z
          .string()
          .check(
            z.regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an origin like http://localhost:5173'),
          ),
      ),
    ),
  }),
  cdn: section({
    // Set by the deployment: the distribution serving /i/*, whose cache the takedowns worker invalidates
    // paths in. Absent locally, where no CDN caches anything.
    distribution_id: optionalText,
    // Set by the deployment: the CloudFront KeyValueStore the /i/* edge function reads as its deny-list of
    // taken-down files (lib/platform/cdn/deny-list.ts). Absent locally: the local server reads the table.
    deny_list_arn: optionalText,
    // How long the CDN's edge keeps an /i/ object (browsers keep it a year, immutably): a deleted file
    // leaves the edge within this, with no invalidation (docs/DESIGN.md 19). Takedowns are invalidated.
    deleted_max_age_seconds: wholeNumber(60, 365 * 24 * 60 * 60, 24 * 60 * 60),
  }),
  // Hotlink protection for every owner's files (docs/IMAGES.md "Serving rules"): `referers` absent, any site
  // may show them (an owner may still set their own list); the service's own pages always may.
  hotlink: section({ referers: z.optional(refererHosts), allow_empty: flag(true) }),
  images: section({
    // Renditions of /i/<key>?w=&h=&fit=&q=&f= (docs/DESIGN.md 15): the only widths and heights, and the
    // only qualities, a query may name, so a file has a bounded set of renditions (docs/IMAGES.md).
    widths: z._default(
      z.array(z.number().check(z.int(), z.minimum(1), z.maximum(8192))).check(z.minLength(1)),
      [...DEFAULT_IMAGE_WIDTHS],
    ),
    qualities: z._default(
      z.array(z.number().check(z.int(), z.minimum(1), z.maximum(100))).check(z.minLength(1)),
      [...DEFAULT_IMAGE_QUALITIES],
    ),
    // The renditions served without a signature (`?p=<name>`, `f` may add auto, webp or avif); any other
    // query needs the deployment's signature (docs/IMAGES.md "Presets and signatures").
    presets: z._default(z.record(z.string().check(z.regex(/^[a-z0-9_-]{1,32}$/)), z.string()), {
      ...DEFAULT_IMAGE_PRESETS,
    }),
    // A stored rendition not requested for this long expires (the bucket's lifecycle on derived/; a
    // rendition served keeps its date fresh).
    derived_ttl_days: wholeNumber(1, 3650, 30),
    // A render that would decode more pixels than this (every frame of an animation kept as one) is 422,
    // refused before decoding.
    max_input_pixels: wholeNumber(1, 268_402_689, 50_000_000),
    // An animation kept as one (GIF or WebP output) with more frames than this is 422 (a 1x1 GIF of 100,000
    // frames is tiny and still slow); a still taken from it decodes the first frame only.
    max_frames: wholeNumber(1, 100_000, 1000),
    // A render that takes longer is stopped (its process killed) with 422 (bounded time whatever the input).
    render_timeout_seconds: wholeNumber(1, 60, 20),
    // A render whose process holds more memory than this is stopped with 422 (docs/IMAGES.md).
    render_memory_mb: wholeNumber(128, 8192, 1024),
    // An AVIF rendition is scaled down to at most this many pixels (3840 x 2160), so its encode, the
    // slowest, fits the render timeout.
    avif_max_pixels: wholeNumber(1, 268_402_689, 8_294_400),
    // A rendition that failed (415, 422) answers the same for this long without being rendered again.
    failure_cache_seconds: wholeNumber(0, 7 * 24 * 60 * 60, 600),
  }),
  log: section({ level: z._default(z.enum(['debug', 'info', 'warn', 'error', 'silent']), 'info') }),
  auth: section({
    session_ttl_hours: wholeNumber(1, 24 * 30, 24),
    // Proof of work on registration, reset-code sends, share passwords and reports (docs/ACCOUNTS.md
    // "Proof of work"): ALTCHA (max_number: its difficulty), or Cloudflare Turnstile verified at verify_url.
    challenge: section({
      required: flag(false),
      provider: z._default(z.enum(['altcha', 'turnstile']), 'altcha'),
      max_number: wholeNumber(10, 10_000_000, 100_000),
      expires_seconds: wholeNumber(10, 3600, 300),
      // Both keys from Cloudflare's dashboard; the secret is set as AUTH__CHALLENGE__TURNSTILE__SECRET_KEY.
      turnstile: section({
        site_key: optionalText,
        secret_key: optionalText,
        verify_url: z._default(url, 'https://challenges.cloudflare.com/turnstile/v0/siteverify'),
      }),
    }),
    ip_limit_per_minute: wholeNumber(0, 100_000, 60),
    // The issuer authenticator apps show next to the account (the otpauth link of /auth/totp/setup).
    totp_issuer: z._default(z.string().check(z.trim(), z.minLength(1), z.maxLength(64)), 'Account Service'),
    // Passkeys (docs/DESIGN.md 18): the relying party's id (default: the host of base_url) and the origins a
    // ceremony may run at besides base_url's own (the console's, where it is served from elsewhere).
    passkeys: section({
      rp_id: z.optional(
        z
          .string()
          .check(z.regex(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/, 'must be a host name like example.com')),
      ),
      origins: z._default(
        z.array(
          z
            .string()
            .check(
              z.regex(
                /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/,
                'must be an origin like https://console.example.com',
              ),
            ),
        ),
        [],
      ),
    }),
    providers: signInProviders,
  }),
  admin: section({
    // docs/ACCOUNTS.md "Administrators' second factor": an administrator without TOTP or a passkey may do
    // nothing but set one up. Absent: on in a production deployment (isProduction), off elsewhere.
    require_second_factor: z.optional(z.boolean()),
    bootstrap: section({
      username: optionalText,
      email: z.optional(z.email()),
      password: z.optional(z.string().check(z.minLength(8), z.maxLength(128))),
    }),
  }),
  mail: section({ from: z.optional(z.email()), ses_region: optionalText }),
  // The site's name until an administrator sets the branding in the console (docs/DEPLOYMENT.md "Branding").
  site: section({ name: z._default(z.string().check(z.minLength(1), z.maxLength(60)), 'Image host') }),
  upload: section({
    api_token: z.optional(z.string().check(z.minLength(16, 'must be at least 16 characters'))),
    // The static token's requests have a rate, its uploads a storage quota of their own (docs/UPLOADS.md);
    // the rate is twice the 50 uploads/s of the target load (docs/PERFORMANCE.md), per_day 0: no daily cap.
    api_token_quota_bytes: wholeNumber(0, 2 ** 50, 10 * 1024 ** 3),
    api_token_rate: rateLimit({ per_minute: 6000, burst: 600, per_day: 0 }),
    // docs/UPLOADS.md "Upload rates": an account's files and bytes a minute and a UTC day, by the plan it
    // holds (a plan's absent fields: `rate`'s); administrators' and the static token's uploads have none.
    rate: section({
      files_per_minute: z._default(rateCount, 600),
      files_per_day: z._default(rateCount, 20_000),
      bytes_per_minute: z._default(rateCount, 10 * 1024 ** 3),
      bytes_per_day: z._default(rateCount, 200 * 1024 ** 3),
    }),
    rate_by_plan: z._default(z.record(z.string(), z.partial(z.object(uploadRate))), {}),
    max_bytes: wholeNumber(1, 6 * 1024 * 1024, 4 * 1024 * 1024),
    presign_max_bytes: wholeNumber(1, 5 * 1024 ** 3, 100 * 1024 * 1024),
    allowed_types: z._default(z.array(z.enum(UPLOAD_TYPES)).check(z.minLength(1)), [...UPLOAD_TYPES]),
    // The storage of an account without an active plan grant (docs/DESIGN.md 11); administrators have none.
    default_quota_bytes: wholeNumber(0, 2 ** 50, 1024 ** 3),
    // Store images without EXIF (GPS), XMP, IPTC and comments; the orientation stays (docs/UPLOADS.md).
    strip_metadata: flag(true),
  }),
  payment: section({
    default_gateway: z._default(z.enum(PROVIDERS), 'manual'),
    order_ttl_minutes: wholeNumber(1, 7 * 24 * 60, 30),
    notify_base_url: optionalUrl,
    // Reconciliation (docs/PAYMENTS-GUIDE.md, "Reconciliation"): each pending channel order has its own
    // schedule of checks at its channel (the `due` index). The first is min_age_minutes after the order is
    // placed (its callback normally comes within seconds); each check that finds it unpaid doubles the wait
    // (min_age_minutes, then twice that...) up to max_interval_minutes. It leaves the schedule after
    // max_checks checks, or with the check at its deadline + margin_minutes (the channel closed it at the
    // deadline; the margin catches a payment made at the last moment whose callback was lost).
    reconcile: section({
      min_age_minutes: wholeNumber(1, 24 * 60, 3),
      margin_minutes: wholeNumber(0, 7 * 24 * 60, 60),
      max_interval_minutes: wholeNumber(1, 24 * 60, 60),
      max_checks: wholeNumber(1, 1000, 10),
      // Checks one run makes at most (every shard of the schedule read at once); the rest stay due and the
      // next run takes them. 20,000 a 5-minute run holds 50 abandoned orders/s (docs/CAPACITY.md "Workers").
      max_orders_per_run: wholeNumber(1, 200_000, 20_000),
      // Queries in flight at once at each channel, so a run never floods one (nor waits on a slow one).
      channel_concurrency: wholeNumber(1, 256, 16),
      // npm start's periodic run (in AWS a schedule runs the reconciler every 5 minutes); 0 turns it off.
      local_interval_seconds: wholeNumber(0, 24 * 60 * 60, 300),
    }),
    mock: section({ enabled: flag(false) }),
    // Coupon checks (POST /api/v1/coupons/validate, and an order naming a code) per buyer and per client
    // address, so codes cannot be guessed in bulk (docs/PAYMENTS-GUIDE.md "Coupons"); 429 past either.
    coupon_checks: section({
      // The console checks a code against every plan on sale: a burst of 20 covers a catalogue twice over.
      per_account: rateLimit({ per_minute: 10, burst: 20, per_day: 200 }),
      per_address: rateLimit({ per_minute: 30, burst: 60, per_day: 2000 }),
    }),
    channel_a: channelA,
    channel_b: channelB,
    channel_c: channelC,
  }),
  // docs/UPLOADS.md "Bandwidth": bytes served a month to an account without a plan granting a cap (absent:
  // unlimited), the share past the cap before its files stop being served, and how many days of CDN logs
  // each run of the bandwidth worker lists (every 5 minutes in AWS; locally every local_interval_seconds).
  bandwidth: section({
    default_bytes: z.optional(z.number().check(z.int(), z.minimum(0), z.maximum(2 ** 50))),
    grace_percent: wholeNumber(0, 1000, 10),
    local_interval_seconds: wholeNumber(0, 24 * 60 * 60, 60),
  }),
  // docs/MODERATION.md: every stored image classified by the moderation worker (nsfwjs on the function, or
  // Amazon Rekognition), `held` at or above hold_above (null: nothing held; 0: everything, until reviewed),
  // `flagged` at or above flag_above; per plan by id. An upload within block_distance bits of a taken-down
  // image's perceptual hash is refused. Reports from anyone, at report_rate per address.
  moderation: section({
    enabled: flag(true),
    provider: z._default(z.enum(['nsfwjs', 'rekognition']), 'nsfwjs'),
    hold_above: z._default(threshold, 0.85),
    flag_above: z._default(threshold, 0.5),
    // A plan's own thresholds (absent: the deployment's) apply to files of owners holding it.
    plans: z._default(
      z.record(
        z.string(),
        z.object({ hold_above: z.optional(threshold), flag_above: z.optional(threshold) }),
      ),
      {},
    ),
    block_distance: wholeNumber(0, 6, 6),
    report_rate: rateLimit({ per_minute: 5, burst: 5, per_day: 50 }),
  }),
  // docs/UPLOADS.md "Trash": an owner's deleted file waits there this many days before it is purged.
  files: section({ trash_days: wholeNumber(1, 3650, 30) }),
  // docs/ACCOUNTS.md "Audit log": every administrator action, kept this many days.
  // Webhook targets on loopback, private or link-local addresses, and plain http (docs/WEBHOOKS.md "Targets"):
  // for local and test stages only; a production deployment refuses them whatever this says.
  webhooks: section({ allow_private_targets: flag(false) }),
  audit: section({ retention_days: wholeNumber(1, 3650, 365) }),
  // docs/ABUSE.md "Bans": each container reads the bans again this often (a lifted or new ban holds
  // everywhere within it; its own container at once).
  // The WAF's IP sets the ban-mirror worker writes (deployment-owned; only where the stack has its web ACL).
  abuse: section({
    bans: section({
      refresh_seconds: wholeNumber(1, 3600, 30),
      waf_ipv4_set_arn: optionalText,
      waf_ipv6_set_arn: optionalText,
    }),
  }),
  // docs/DESIGN.md 17: the owner of a paid plan is mailed once per grant this many days before it ends,
  // by the reminders worker (every 5 minutes in AWS; every local_interval_seconds under npm start, 0: never).
  billing: section({
    renewal_reminder_days: wholeNumber(1, 60, 3),
    // Reminders started a second at most: keep it at or under the account's SES sending rate (14/s is
    // SES's usual first production quota; 1 million a day needs 12/s on average: docs/CAPACITY.md "Workers").
    reminders_per_second: wholeNumber(1, 10_000, 14),
    local_interval_seconds: wholeNumber(0, 24 * 60 * 60, 300),
  }),
});

export type AppConfig = z.infer<typeof configSchema>;
export type AwsSettings = AppConfig['aws'];

/** Stage names that meant production before `deployment.production` existed (docs/DEPLOYMENT.md). */
const PRODUCTION_STAGE_NAMES: readonly string[] = ['prod', 'production'];

/** Whether the settings describe a production deployment: `deployment.production`, else the stage's name. */
/** `admin.require_second_factor`, or by default whether the deployment is production. */
export function adminSecondFactorRequired(settings: AppConfig): boolean {
  return settings.admin.require_second_factor ?? isProduction(settings);
}

/** Whether webhooks may target special addresses: `webhooks.allow_private_targets`, never in production. */
export const webhookPrivateTargets = (settings: AppConfig) =>
  settings.webhooks.allow_private_targets && !isProduction(settings);

export function isProduction(settings: { stage: string; deployment: { production?: boolean | undefined } }) {
  return settings.deployment.production ?? PRODUCTION_STAGE_NAMES.includes(settings.stage);
}
