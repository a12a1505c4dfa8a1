// Where a key's bytes live in the bucket (docs/UPLOADS.md "Keys and prefixes"). S3 takes about 3,500 writes
// a second per prefix, and record keys begin with their date, so every upload of a day and its renditions
// would share one. A key of the current layout (its file name's suffix is 30 hex digits: 14 random, then
// the owner's tag of 16) is stored under a prefix of its own first two random digits, one of 256 spread
// evenly: `ab/2026/11/29/<file>`, its renditions under `derived/ab/2026/11/29/<file>/...` and a presigned
// upload under `incoming/ab/2026/11/29/<file>`, a file in the trash under `trash/ab/2026/11/29/<file>`. An
// expiring file's name ends with its end (`-x<base 36>`, lib/files/names.ts expiryMark), placed alike.
// Keys stored before (12 random digits) stay where they are.
// The API's `key` and `/i/<key>` never show the prefix. Self-contained: the CDN's /i/* function embeds its
// source (infra/edge.ts), so the edge and the service place a key alike.

/** The bucket key holding the bytes of `key` (a record key, or one under derived/, incoming/ or trash/). */
export function objectKeyOf(key: string): string {
  const match =
    /^((?:derived|incoming|trash)\/)?(\d{4}\/\d{2}\/\d{2}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-([0-9a-f]{2})[0-9a-f]{28}(?:-x[0-9a-z]+)?\.[a-z0-9]+(?:\/.*)?)$/.exec(
      key,
    );
  return match === null ? key : `${match[1] || ''}${match[3]}/${match[2]}`;
}
