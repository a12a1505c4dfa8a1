// Where objects live in the bucket, free of imports so the CDK stack can read it without the S3 client.

/**
 * Presigned uploads land under this prefix and stay there until confirm copies them to their record key;
 * the bucket expires what was never confirmed.
 */
export const INCOMING_PREFIX = 'incoming/';

/** Where a presigned upload of `key` waits for its confirm. */
export const incomingKey = (key: string) => `${INCOMING_PREFIX}${key}`;

/**
 * Stored renditions live under this prefix, `derived/<record key>/<canonical query>`
 * (lib/files/rendition-query.ts): the only keys the render function may write.
 */
export const DERIVED_PREFIX = 'derived/';

/**
 * A file in the trash keeps its bytes here, `trash/<record key>`, out of its served key, so the CDN's edge
 * finds nothing at its URL with no look-up (lib/files/trash.ts); a restore copies them back.
 */
export const TRASH_PREFIX = 'trash/';
export const trashKey = (key: string) => `${TRASH_PREFIX}${key}`;

/** Account exports (docs/ACCOUNTS.md "Export"): one ZIP each, expired by the bucket after EXPORT_EXPIRY_DAYS. */
export const EXPORT_PREFIX = 'exports/';
export const EXPORT_EXPIRY_DAYS = 2;
