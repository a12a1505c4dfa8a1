// The single table's key schema, defined once: the CDK table and the local/test tables are built from it.
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

// What each listing reads of its items (besides keys), named once for the projections below.
/** A file record (lib/files/files.ts `record`): by owner, the gallery and all files. */
const FILE_FIELDS = [
  'id',
  'key',
  'original_name',
  'filename',
  'hash',
  'permission',
  'size',
  'mime_type',
  'width',
  'height',
  'created_at',
] as const;
/** A stored order (lib/billing/model.ts StoredOrder): by buyer, all orders and reconciliation. */
const ORDER_FIELDS = [
  'id',
  'user_id',
  'plan_id',
  'plan_name',
  'amount_cents',
  'currency',
  'provider',
  'status',
  'trade_no',
  'pay_url',
  'qr_code',
  'created_at',
  'updated_at',
  'paid_at',
  'deadline_ms',
  'paid_via',
  'late_payment',
  'status_before_payment',
  'extra_trade_nos',
  'failure_reason',
  'quota_bytes',
  'duration_days',
  'grant',
] as const;
/** An API token as its account's listing shows it (lib/accounts/api-tokens.ts): never its hash. */
const TOKEN_FIELDS = ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'token_epoch'] as const;
/** A pending outbox event (lib/billing/outbox.ts): delivered by key, logged by order. */
const OUTBOX_FIELDS = ['order_id'] as const;
/** An identifier claim (lib/accounts/identifiers.ts): whose it is and which kind; not its login copy. */
const CLAIM_FIELDS = ['account_id', 'kind'] as const;
/** A plan (lib/billing/model.ts Plan). */
const PLAN_FIELDS = [
  'id',
  'name',
  'description',
  'amount_cents',
  'active',
  'quota_bytes',
  'duration_days',
  'created_at',
  'updated_at',
] as const;
/** Items with an end (pending takedowns, delivered outbox events) are left out of a listing once past it. */
const TABLE_TTL = 'expires_at';
const unique = <T>(value: T, index: number, all: readonly T[]) => all.indexOf(value) === index;

export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds. DynamoDB deletes such items eventually; reads treat them as absent at once. */
  ttlAttribute: 'expires_at',
  // Each index carries only what its listings return, never a credential (docs/CAPACITY.md, "Indexes"):
  // `projected` names the non-key attributes an index holds (the table's and the index's keys always are).
  // DynamoDB allows 100 such names across all indexes of a table (a name in two indexes counts twice);
  // these take 74. A listing that needs more reads keys and then the items (Table.getMany): the
  // administrators do, so no account attribute is listed here.
  indexes: [
    // owner: look-ups by a second identity (a file's owner, an order's buyer, an API token's account).
    {
      name: 'owner',
      partitionKey: 'gsi1pk',
      sortKey: 'gsi1sk',
      projected: [...FILE_FIELDS, ...ORDER_FIELDS, ...TOKEN_FIELDS].filter(unique),
    },
    // listing: listings of everything, each spread over shards (lib/platform/db/shards.ts): the public
    // gallery, all files, all orders, pending outbox events, identifiers; and two small unsharded ones
    // written only by administrators (administrators, plans).
    {
      name: 'listing',
      partitionKey: 'gsi2pk',
      sortKey: 'gsi2sk',
      projected: [
        ...FILE_FIELDS,
        ...ORDER_FIELDS,
        ...OUTBOX_FIELDS,
        ...CLAIM_FIELDS,
        ...PLAN_FIELDS,
        TABLE_TTL,
      ].filter(unique),
    },
    // due: the payment reconciler's schedule (lib/billing/reconcile.ts), sparse: only pending channel orders
    // carry it, under `due#<n>` sorted by `<next check>#<order id>`. It holds what a run needs to decide
    // whether to ask the channel; the order itself is read again (strongly) only to settle it.
    {
      name: 'due',
      partitionKey: 'gsi3pk',
      sortKey: 'gsi3sk',
      projected: ['id', 'provider', 'deadline_ms', 'reconcile_checks'] as readonly string[],
    },
  ],
} as const;

export type IndexName = (typeof TABLE.indexes)[number]['name'];

/**
 * The table's stream carries each new item's image: the `order.paid` outbox (docs/DESIGN.md 14,
 * docs/PAYMENTS-GUIDE.md) is drained from it. The stack (infra/operations.ts) builds from these two
 * constants: the table's stream view (`TABLE_STREAM_VIEW`), and the outbox-drain function's event source
 * mapping, filtered to INSERT records whose `pk` begins with `OUTBOX_KEY_PREFIX` (with retries, bisect on
 * error and an SQS on-failure destination). DynamoDB Local gets the same stream (createTableInput below;
 * infra/local/provision.ts enables it on a table made before).
 */
export const TABLE_STREAM_VIEW = 'NEW_IMAGE' as const;
/** Partition keys of outbox items (lib/billing/outbox.ts) begin with this; nothing else does. */
export const OUTBOX_KEY_PREFIX = 'OUTBOX#';
/**
 * Partition keys of file records (lib/files/files.ts `fileKey`): the moderation worker's mapping takes their
 * INSERTs (docs/MODERATION.md).
 */
export const FILE_KEY_PREFIX = 'file#';

/** CreateTable input for DynamoDB Local and tests (on-demand billing, like production). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const attributes = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const index of TABLE.indexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: projectionOf(index),
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_STREAM_VIEW },
  };
}

/** An index's projection: its keys, and the non-key attributes its listings return. */
export function projectionOf(index: { projected: readonly string[] }): {
  ProjectionType: 'KEYS_ONLY' | 'INCLUDE';
  NonKeyAttributes?: string[];
} {
  return index.projected.length === 0
    ? { ProjectionType: 'KEYS_ONLY' }
    : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projected] };
}

/**
 * A plan's item (lib/billing/plans.ts): here because files read it too (its watermark, lib/files/owner-marks.ts)
 * and the domains do not import each other's repositories.
 */
export const planKey = (id: string) => ({ pk: `plan#${id}`, sk: 'plan' });
