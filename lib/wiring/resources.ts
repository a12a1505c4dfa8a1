// A group's resources, built on first use from its settings and reachable only through its needs: a group
// that did not declare the master key cannot open it here, whatever its settings say (docs/CONTRIBUTING.md).
// Free functions rather than methods, so a bundle carries only the SDK clients its group reaches for.
import { dynamoClient } from '../aws/dynamodb.ts';
import { eventBridgeClient } from '../aws/events.ts';
import { s3Client } from '../aws/s3.ts';
import { sesClient } from '../aws/ses.ts';
import type { AppConfig } from '../config/schema.ts';
import { cachedMasterKey, type MasterKey, openMasterKey } from '../crypto/index.ts';
import { type Clock, Table } from '../db/repository.ts';
import { eventBridgePublisher, logPublisher, type OrderEventPublisher } from '../events/order-events.ts';
import { AppError } from '../http/errors.ts';
import { logMailer, type Mailer } from '../mail/mailer.ts';
import { sesMailer } from '../mail/ses.ts';
import { FileStorage } from '../upload/storage.ts';
import type { GroupNeeds, Need } from './needs.ts';

/** A group reached for something its needs do not declare: a wiring bug, never the caller's fault. */
export class MissingNeedError extends AppError {
  constructor(group: string, need: Need) {
    super(
      500,
      'internal',
      `The ${group} function uses ${need}, which functions/${group}/needs.ts does not declare`,
      {
        expose: false,
      },
    );
    this.name = 'MissingNeedError';
  }
}

export interface GroupResources {
  readonly group: string;
  readonly needs: GroupNeeds;
  readonly settings: Readonly<AppConfig>;
  readonly clock: Clock | undefined;
  /** What has been built, once per container. */
  readonly built: Map<Need, unknown>;
}

export function groupResources(
  group: string,
  needs: GroupNeeds,
  settings: Readonly<AppConfig>,
  options: { clock?: Clock } = {},
): GroupResources {
  return { group, needs, settings, clock: options.clock, built: new Map() };
}

function once<T>(resources: GroupResources, need: Need, build: () => T): T {
  if (!resources.needs[need]) throw new MissingNeedError(resources.group, need);
  if (!resources.built.has(need)) resources.built.set(need, build());
  return resources.built.get(need) as T;
}

export function tableOf(resources: GroupResources): Table {
  const { settings, clock } = resources;
  return once(resources, 'table', () => new Table(dynamoClient(settings.aws), settings.table_name, clock));
}

export function storageOf(resources: GroupResources): FileStorage {
  const { settings } = resources;
  return once(resources, 'bucket', () => new FileStorage(s3Client(settings.aws), settings.bucket_name));
}

/**
 * The master key as the builders take it: a function opening it on first use. Asking for it is where a
 * missing need shows; a key that fails to open is tried again by the next request.
 */
export function masterKeyOf(resources: GroupResources): () => Promise<MasterKey> {
  return once(resources, 'masterKey', () => cachedMasterKey(() => openMasterKey(resources.settings)));
}

/** EventBridge when the deployment names a bus, else one log line per event. */
export function eventsOf(resources: GroupResources): OrderEventPublisher {
  const { aws } = resources.settings;
  return once(resources, 'events', () =>
    aws.event_bus_name ? eventBridgePublisher(eventBridgeClient(aws), aws.event_bus_name) : logPublisher,
  );
}

/** SES as `mail.from` when it is set, else the log fallback. */
export function mailerOf(resources: GroupResources): Mailer {
  const { mail, aws } = resources.settings;
  return once(resources, 'mail', () =>
    mail.from
      ? sesMailer(sesClient({ region: mail.ses_region ?? aws.region, endpoint: aws.ses_endpoint }), mail.from)
      : logMailer,
  );
}
