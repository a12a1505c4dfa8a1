// The service's names of what the bucket holds: objects of the current layout sit under a spread prefix
// (lib/platform/storage/object-keys.ts); tests that list the bucket compare what they find with record keys,
// so listings are read back as those keys.

/** The key the service knows an object by: its bucket key without the spread prefix, if it has one. */
export function serviceKeyOf(objectKey: string): string {
  return objectKey.replace(/^((?:derived|incoming|trash)\/)?[0-9a-f]{2}\/(?=\d{4}\/\d{2}\/\d{2}\/)/, '$1');
}
