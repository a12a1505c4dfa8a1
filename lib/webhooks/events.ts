// Where webhook events come from (docs/WEBHOOKS.md "Events"), all read by the outbox drain on the table's
// stream, so none is lost once its change is committed (the stream keeps each record for 24 h and the drain's
// mapping retries, then dead-letters, a batch it failed):
// - file.uploaded: the INSERT of a file record, which every upload path (direct, presign confirm, token)
//   writes once, in its own transaction; the record's new image carries what the event says.
// - file.deleted: an outbox item written in the owner's delete transaction (lib/files/file-deletion.ts).
// - order.paid: the order.paid outbox item settlement writes in its transaction (lib/billing/outbox.ts).
import { createHash } from 'node:crypto';
import type { AttributeValue } from 'aws-lambda';
import { ORDER_PAID } from '#lib/billing/order-events.ts';
import type { OutboxItem } from '#lib/billing/outbox.ts';
import { FILE_DELETED, type FileDeletedItem } from '#lib/files/file-deletion.ts';
import { FILE_KEY_PREFIX, OUTBOX_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import type { Key } from '#lib/platform/db/table.ts';
import type { WebhookEvent } from './deliveries.ts';

/** The same event always has the same id (a replayed stream record makes no second delivery). */
const eventId = (type: string, subject: string) =>
  `evt_${createHash('sha256').update(`${type}:${subject}`).digest('hex').slice(0, 32)}`;

/** What file.uploaded and file.deleted say of a file. */
const fileData = (file: FileDeletedItem['file'], baseUrl: string) => ({
  id: file.id,
  key: file.key,
  url: `${baseUrl}/i/${file.key}`,
  original_name: file.original_name,
  size: file.size,
  mime_type: file.mime_type,
});

/** A stream record's key and new image, as the drain gets them. */
export interface StreamChange {
  key: Key;
  image?: Record<string, AttributeValue>;
}

/** Whether the drain makes a webhook event of this INSERT (order.paid: besides publishing it). */
export const isWebhookSource = ({ pk, sk }: Key) =>
  (pk.startsWith(FILE_KEY_PREFIX) && sk === 'file') ||
  (pk.startsWith(OUTBOX_KEY_PREFIX) && (sk === FILE_DELETED || sk === ORDER_PAID));

/**
 * The event of one change (undefined when it makes none): file.uploaded from the record's image, the others
 * from their outbox items (`read`, expired ones included).
 */
export async function eventOf(
  change: StreamChange,
  read: (key: Key) => Promise<Record<string, unknown> | undefined>,
  baseUrl: string,
): Promise<WebhookEvent | undefined> {
  const { key, image } = change;
  if (key.sk === 'file') {
    const s = (name: string) => image?.[name]?.S ?? '';
    const n = (name: string) => Number(image?.[name]?.N ?? 0);
    const file = { id: s('id'), key: s('key'), original_name: s('original_name'), size: n('size') };
    const data = {
      ...fileData({ ...file, mime_type: s('mime_type') }, baseUrl),
      ...{ width: n('width'), height: n('height'), created_at: s('created_at') },
    };
    const at = { created_at: s('created_at'), account_id: s('owner_id') };
    return { id: eventId('file.uploaded', file.id), type: 'file.uploaded', ...at, data };
  }
  const item = await read(key);
  if (!item) return undefined;
  if (key.sk === FILE_DELETED) {
    const { file, owner_id, created_at } = item as unknown as FileDeletedItem;
    const data = { ...fileData(file, baseUrl), deleted_at: created_at };
    return { id: eventId(FILE_DELETED, key.pk), type: FILE_DELETED, created_at, account_id: owner_id, data };
  }
  const order = item as unknown as OutboxItem;
  return {
    id: eventId(ORDER_PAID, order.order_id),
    type: 'order.paid',
    created_at: order.created_at,
    account_id: order.detail.user_id,
    data: { ...order.detail },
  };
}
