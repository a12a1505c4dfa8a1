// What a metadata stripper answers: rewritten bytes, bytes left as they are (with why), or a refusal; and the
// image kinds the service accepts (the sniffer decides which one an upload is).

export const IMAGE_KINDS = ['png', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico'] as const;
export type ImageKind = (typeof IMAGE_KINDS)[number];

/**
 * - `stripped`: `bytes` is the image without its metadata (the very input Buffer when nothing had to go);
 *   `removed` names what went, each label once, in order of first appearance (empty when nothing did).
 * - `unchanged`: a format or container this service does not rewrite; store the input as it is and log
 *   `reason`.
 * - `refused`: the container is malformed (truncated, lengths past the end, no image data); answer 415.
 */
export type StripResult =
  | { kind: 'stripped'; bytes: Buffer; removed: string[] }
  | { kind: 'unchanged'; reason: string }
  | { kind: 'refused'; reason: string };

export function refused(reason: string): StripResult {
  return { kind: 'refused', reason };
}

export function unchanged(reason: string): StripResult {
  return { kind: 'unchanged', reason };
}

/**
 * Most segments, chunks or boxes (per level) a file may have. Real images have tens to a few thousand
 * (animation frames); 4 MiB of minimal ones would be a million steps of work for nothing.
 */
export const MAX_PIECES = 65_536;

/**
 * The work the container readers (the strippers here) have done, as counts rather
 * than time, so tests can bound it deterministically (test/unit/files/bounded-work.test.ts; a timed bound
 * flaked on a loaded machine): `pieces`, each segment, chunk, box, directory entry or extent a walk visits;
 * `bytes`, each byte a loop of ours examines one at a time (fill bytes, entropy-coded data, strings). Work
 * of a fixed size per piece (a header, a prefix compared) and native calls (equals, copy) are not counted.
 * A loop whose length depends on the input must report here, or the tests cannot see it. Module-wide and
 * never reset by the readers; nothing reads it to decide anything.
 */
export const readerWork = { pieces: 0, bytes: 0 };

/** A four-character type (chunk, box) as a big-endian number: compared with no string per piece. */
export function code(type: string): number {
  return Buffer.from(type, 'latin1').readUInt32BE(0);
}

/** Counts pieces of a walk and refuses past MAX_PIECES. */
export function countPiece(count: number): number {
  if (count >= MAX_PIECES) throw new MalformedImage(`more than ${MAX_PIECES} segments, chunks or boxes`);
  readerWork.pieces += 1;
  return count + 1;
}

/** Thrown by a stripper's readers when the container is malformed; stripMetadata turns it into `refused`. */
export class MalformedImage extends Error {
  override readonly name = 'MalformedImage';
}
