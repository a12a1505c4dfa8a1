// The one schema of the service's settings (docs/DESIGN.md 3): dotted names as docs/SPEC.md writes them.
import * as z from 'zod';

// No generated fast paths (zod compiles one per object schema with `new Function` on its first parse):
// a cold start parses each schema about once, so compiling them costs more than it saves (about 4 ms of
// the configuration's validation at import). Same results, same messages. Set here, before any parse,
// since every module that validates imports the configuration first.
z.config({ jitless: true });

const optionalText = z.string().trim().min(1).optional();
const url = z.url({ protocol: /^https?$/ });
const optionalUrl = url.optional();

const channelA = z
  .object({
    enabled: z.boolean().default(false),
    app_id: optionalText,
    private_key: optionalText,
    public_key: optionalText,
    // Optional Alipay seller PID: when set, notifications must name it too (docs/PAYMENTS-GUIDE.md 1.7 step 5).
    seller_id: optionalText,
    gateway_url: optionalUrl,
  })
  .prefault({});

const channelB = z
  .object({
    enabled: z.boolean().default(false),
    app_id: optionalText,
    mch_id: optionalText,
    serial_no: optionalText,
    private_key: optionalText,
    // docs/SPEC.md 8: the v3 key is exactly 32 bytes.
    api_v3_key: z
      .string()
      .refine((key) => Buffer.byteLength(key, 'utf8') === 32, 'must be exactly 32 bytes')
      .optional(),
    platform_public_key: optionalText,
    platform_serial_no: optionalText,
    api_base_url: optionalUrl,
  })
  .prefault({});

const channelC = z
  .object({
    enabled: z.boolean().default(false),
    pid: optionalText,
    key: optionalText,
    gateway_url: optionalUrl,
    api_url: optionalUrl,
    submit_url: optionalUrl,
    pay_type: optionalText,
  })
  .prefault({});

export const PROVIDERS = ['manual', 'mock', 'channel_a', 'channel_b', 'channel_c'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const UPLOAD_TYPES = ['png', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico'] as const;

export const configSchema = z.object({
  stage: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a short lower-case name')
    .default('local'),
  base_url: url.default('http://localhost:3000').transform((value) => value.replace(/\/+$/, '')),
  port: z.number().int().min(0).max(65535).default(3000),
  data_dir: z.string().min(1).default('.data'),
  table_name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a valid DynamoDB table name')
    .default('service'),
  bucket_name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')
    .default('service-files'),
  aws: z
    .object({
      region: z.string().min(1).default('us-east-1'),
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
    })
    .prefault({}),
  master_key: z
    .object({
      // kms: envelope encryption with this KMS key; local: 32 random bytes kept in data_dir.
      provider: z.enum(['local', 'kms']).default('local'),
      kms_key_id: optionalText,
    })
    .prefault({}),
  // The CDN's proof on every API request (lib/http/front-door.ts, docs/DEPLOYMENT.md). Set by the deployment
  // or the local runner from the `frontDoor` need: secrets-manager names the secret the stack generates;
  // local reads origin-secret.json in data_dir, which the local server (playing the CDN) sends; none (the
  // default, in-process tests) checks nothing.
  front_door: z
    .object({
      provider: z.enum(['none', 'local', 'secrets-manager']).default('none'),
      secret_id: optionalText,
      // How long a read value is trusted: a rotated secret is picked up within this, without a redeploy.
      cache_seconds: z.number().int().min(1).max(3600).default(300),
    })
    // Caught once at start, not as a 503 on every request.
    .refine((door) => door.provider !== 'secrets-manager' || door.secret_id !== undefined, {
      message: 'is required when front_door.provider is secrets-manager',
      path: ['secret_id'],
    })
    .prefault({}),
  http: z
    .object({
      // Browser origins the LOCAL server answers CORS for (default: any http://localhost:<port>); in AWS
      // CORS is the API Gateway's, from the stage's infra.cors_origins.
      cors_origins: z
        .array(
          z
            .string()
            .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an origin like http://localhost:5173'),
        )
        .optional(),
    })
    .prefault({}),
  cdn: z
    .object({
      // Set by the deployment: the distribution serving /i/*, whose cache a deleted file is invalidated
      // in. Absent locally, where no CDN caches anything.
      distribution_id: optionalText,
    })
    .prefault({}),
  log: z.object({ level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info') }).prefault({}),
  auth: z
    .object({
      session_ttl_hours: z
        .number()
        .int()
        .min(1)
        .max(24 * 30)
        .default(24),
      ip_limit_per_minute: z.number().int().min(0).max(100_000).default(60),
      // The issuer authenticator apps show next to the account (the otpauth link of /auth/totp/setup).
      totp_issuer: z.string().trim().min(1).max(64).default('Account Service'),
    })
    .prefault({}),
  admin: z
    .object({
      bootstrap: z
        .object({
          username: optionalText,
          email: z.email().optional(),
          password: z.string().min(8).max(128).optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  mail: z
    .object({
      from: z.email().optional(),
      ses_region: optionalText,
    })
    .prefault({}),
  upload: z
    .object({
      api_token: z.string().min(16, 'must be at least 16 characters').optional(),
      max_bytes: z
        .number()
        .int()
        .min(1)
        .max(6 * 1024 * 1024)
        .default(4 * 1024 * 1024),
      presign_max_bytes: z
        .number()
        .int()
        .min(1)
        .max(5 * 1024 ** 3)
        .default(100 * 1024 * 1024),
      allowed_types: z
        .array(z.enum(UPLOAD_TYPES))
        .min(1)
        .default([...UPLOAD_TYPES]),
      // The storage of an account without an active plan grant (docs/DESIGN.md 11); administrators have none.
      default_quota_bytes: z
        .number()
        .int()
        .min(0)
        .max(2 ** 50)
        .default(1024 ** 3),
      // Store images without EXIF (GPS), XMP, IPTC and comments; the orientation stays (docs/UPLOADS.md).
      strip_metadata: z.boolean().default(true),
    })
    .prefault({}),
  payment: z
    .object({
      default_gateway: z.enum(PROVIDERS).default('manual'),
      order_ttl_minutes: z
        .number()
        .int()
        .min(1)
        .max(7 * 24 * 60)
        .default(30),
      notify_base_url: optionalUrl,
      // Reconciliation (docs/PAYMENTS-GUIDE.md, "Reconciliation"): pending channel orders older than
      // min_age_minutes and younger than order_ttl_minutes + margin_minutes are asked about at their channel.
      reconcile: z
        .object({
          min_age_minutes: z
            .number()
            .int()
            .min(1)
            .max(24 * 60)
            .default(3),
          margin_minutes: z
            .number()
            .int()
            .min(0)
            .max(7 * 24 * 60)
            .default(60),
          // npm start's periodic run (in AWS a schedule runs the reconciler every 5 minutes); 0 turns it off.
          local_interval_seconds: z
            .number()
            .int()
            .min(0)
            .max(24 * 60 * 60)
            .default(300),
        })
        .prefault({}),
      mock: z.object({ enabled: z.boolean().default(false) }).prefault({}),
      channel_a: channelA,
      channel_b: channelB,
      channel_c: channelC,
    })
    .prefault({}),
});

export type AppConfig = z.infer<typeof configSchema>;
export type AwsSettings = AppConfig['aws'];
