// What a function group may declare it needs, and the environment each need implies. Free of imports, so
// the CDK stack, the local runner and the groups themselves read the one declaration (docs/CONTRIBUTING.md).

export type Access = 'read' | 'readwrite';

/**
 * One group's needs (functions/<group>/needs.ts). The stack grants exactly these and sets exactly their
 * variables; the group's dependencies can reach nothing else (lib/wiring/resources.ts).
 */
export interface GroupNeeds {
  /** The single DynamoDB table. */
  table?: Access;
  /** The files bucket. */
  bucket?: Access;
  /** The master key that seals TOTP secrets, payment credentials and the token-signing key. */
  masterKey?: boolean;
  /** The event bus that carries `order.paid`. */
  events?: boolean;
  /** Sending mail (SES as the identity of `mail.from`; the log when no mail channel is set). */
  mail?: boolean;
  /**
   * One front door: the CDN's origin secret, without which a request is refused (lib/http/front-door.ts);
   * with it, the viewer's address the CDN names is believed. Every group API Gateway reaches declares it.
   */
  frontDoor?: boolean;
  /**
   * Reading the sign-in providers' client secrets: GetSecretValue on the Secrets Manager secrets that
   * `auth.providers[].secret_id` names, and no other (docs/ACCOUNTS.md "Sign in with another provider").
   */
  providerSecrets?: boolean;
  /** The payment channels' notify address (the callback function's URL). */
  notifyUrl?: boolean;
  /**
   * Taking files out of the CDN: CloudFront CreateInvalidation on the one distribution, and writing the
   * edge's deny-list (the KeyValueStore its /i/* function reads).
   */
  cdn?: boolean;
  /**
   * Writing renditions: PutObject under the bucket's derived/ prefix only (lib/files/rendition-query.ts),
   * beside `bucket: 'read'` for the originals: the render function, and shares for its thumbnails.
   */
  renditions?: boolean;
  /**
   * The renditions' claims and remembered failures (lib/files/rendition-claims.ts): GetItem, PutItem and
   * DeleteItem on the table for `RENDITION#` partitions only. The render function's alone.
   */
  renditionClaims?: boolean;
  /**
   * The address bans (lib/accounts/bans.ts): Query on the table for the `BANS` partition only, so every
   * group API Gateway reaches refuses a banned viewer, tables or not (docs/ABUSE.md "Bans").
   */
  bans?: boolean;
  /** The WAF's two IP sets of banned networks (GetIPSet, UpdateIPSet): the ban-mirror worker's alone. */
  wafIpSets?: boolean;
  /** Reading the CDN's access logs (the access-log bucket's `cdn/`): the bandwidth worker's alone. */
  accessLogs?: boolean;
  /**
   * Amazon Rekognition's DetectModerationLabels, granted only where `moderation.provider` is rekognition
   * (docs/MODERATION.md): the moderation worker's alone. With nsfwjs the model ships in the bundle.
   */
  moderationApi?: boolean;
}

export type Need = keyof GroupNeeds;

export const NEEDS: readonly Need[] = [
  'table',
  'bucket',
  'masterKey',
  'events',
  'mail',
  'frontDoor',
  'providerSecrets',
  'notifyUrl',
  'cdn',
  'renditions',
  'renditionClaims',
  'bans',
  'wafIpSets',
  'accessLogs',
  'moderationApi',
];

/** Where the master key lives: KMS in AWS, a key file in the data folder locally. */
export type MasterKeyLocation = { provider: 'kms'; keyId: string } | { provider: 'local'; dataDir: string };

/** Where the origin secret lives: Secrets Manager in AWS, a file in the data folder locally. */
export type FrontDoorLocation =
  | { provider: 'secrets-manager'; secretId: string }
  | { provider: 'local'; dataDir: string };

/** The values a deployment (CDK tokens) or the local runner (real names) puts behind the needs. */
export interface NeedValues {
  baseUrl: string;
  tableName: string;
  bucketName: string;
  masterKey: MasterKeyLocation;
  /** Absent locally: `order.paid` goes to the log. */
  eventBusName?: string;
  /** The origin secret the CDN (or locally the local server) sends. */
  frontDoor: FrontDoorLocation;
  /** Absent: channels are told `base_url`. */
  notifyBaseUrl?: string;
  /** Absent locally: there is no CDN whose cache could hold a deleted file. */
  distributionId?: string;
  /** The edge's deny-list (a KeyValueStore ARN); absent locally, like the distribution. */
  denyListArn?: string;
  /** The access-log bucket; absent locally (the setting's default names the local one). */
  accessLogBucketName?: string;
  /** The WAF's IP sets of banned networks: only where the stack has its own web ACL. */
  banIpSetArns?: { ipv4: string; ipv6: string };
}

/**
 * Settings the deployment (or the local runner) sets on each function from its needs; a stage file must
 * not, and the local runner leaves them out of the settings it hands a function.
 */
export const DEPLOYMENT_OWNED_SETTINGS = [
  'table_name',
  'bucket_name',
  'master_key',
  'aws.event_bus_name',
  'aws.dynamodb_endpoint',
  'aws.s3_endpoint',
  'aws.ses_endpoint',
  'aws.kms_endpoint',
  'aws.events_endpoint',
  'aws.cloudfront_endpoint',
  'cdn.distribution_id',
  'cdn.deny_list_arn',
  'access_log_bucket_name',
  'abuse.bans.waf_ipv4_set_arn',
  'abuse.bans.waf_ipv6_set_arn',
  'payment.notify_base_url',
  'front_door.provider',
  'front_door.secret_id',
  'aws.secrets_manager_endpoint',
  'port',
  'data_dir',
] as const;

/** Variables every function gets whatever it needs: its settings and its public address. */
export const COMMON_VARIABLES = ['APP_CONFIG_JSON', 'BASE_URL'] as const;

/**
 * The configuration overrides (lib/platform/config: `a.b` is `A__B`) a group's needs imply. The stack sets these
 * on the function; the local runner sets them on the group's process; the deployed-shape test checks them.
 */
export function environmentFor(needs: GroupNeeds, values: NeedValues): Record<string, string> {
  const env: Record<string, string> = { BASE_URL: values.baseUrl };
  if (needs.table || needs.renditionClaims || needs.bans) env.TABLE_NAME = values.tableName;
  if (needs.bucket) env.BUCKET_NAME = values.bucketName;
  if (needs.masterKey) {
    env.MASTER_KEY__PROVIDER = values.masterKey.provider;
    if (values.masterKey.provider === 'kms') env.MASTER_KEY__KMS_KEY_ID = values.masterKey.keyId;
    else env.DATA_DIR = values.masterKey.dataDir;
  }
  if (needs.events && values.eventBusName) env.AWS__EVENT_BUS_NAME = values.eventBusName;
  if (needs.frontDoor) {
    env.FRONT_DOOR__PROVIDER = values.frontDoor.provider;
    if (values.frontDoor.provider === 'secrets-manager')
      env.FRONT_DOOR__SECRET_ID = values.frontDoor.secretId;
    else env.DATA_DIR = values.frontDoor.dataDir;
  }
  if (needs.notifyUrl && values.notifyBaseUrl) env.PAYMENT__NOTIFY_BASE_URL = values.notifyBaseUrl;
  if (needs.cdn && values.distributionId) env.CDN__DISTRIBUTION_ID = values.distributionId;
  if (needs.cdn && values.denyListArn) env.CDN__DENY_LIST_ARN = values.denyListArn;
  if (needs.accessLogs && values.accessLogBucketName) env.ACCESS_LOG_BUCKET_NAME = values.accessLogBucketName;
  if (needs.wafIpSets && values.banIpSetArns) {
    env.ABUSE__BANS__WAF_IPV4_SET_ARN = values.banIpSetArns.ipv4;
    env.ABUSE__BANS__WAF_IPV6_SET_ARN = values.banIpSetArns.ipv6;
  }
  return env;
}

/** The variables a deployed function must carry for its needs (the stack always has every value). */
export function deployedVariablesOf(needs: GroupNeeds): string[] {
  const placeholder = 'x';
  return [
    'APP_CONFIG_JSON',
    ...Object.keys(
      environmentFor(needs, {
        baseUrl: placeholder,
        tableName: placeholder,
        bucketName: placeholder,
        masterKey: { provider: 'kms', keyId: placeholder },
        eventBusName: placeholder,
        frontDoor: { provider: 'secrets-manager', secretId: placeholder },
        notifyBaseUrl: placeholder,
        distributionId: placeholder,
        denyListArn: placeholder,
        accessLogBucketName: placeholder,
      }),
    ),
  ];
}
