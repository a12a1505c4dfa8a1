// Rewriting items written before a change of key shape (`npm run migrate:shards`, docs/DEPLOYMENT.md):
// each domain says which of its items are of an older shape and the one conditional update that brings
// such an item to the current one. The update's condition holds only while the item is still as read, so
// a request changing it meanwhile wins, and a second run finds nothing left to do.
import type { Item } from './table.ts';

/** What a migration needs to know of the settings. */
export interface MigrationSettings {
  listingShards: number;
}

/** One conditional update of an item, in the document client's terms (key included). */
export interface ItemUpdate {
  Key: { pk: string; sk: string };
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

export interface ItemMigration {
  /** Names it in the script's report, e.g. `files: gallery shards`. */
  name: string;
  /**
   * The update bringing `item` to the current shape (or updates, applied in order, when a companion item
   * moves with it), or undefined when it has it already or is not its kind.
   */
  plan(item: Item, settings: MigrationSettings): ItemUpdate | ItemUpdate[] | undefined;
}
