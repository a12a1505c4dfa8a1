// The perceptual hash of the block list (docs/MODERATION.md "The block list (never again)"): pHash, 64 bits
// that stay nearly the same when an image is resized, recompressed or stripped of its metadata, so a
// taken-down image uploaded again as such a copy is found by its Hamming distance to the blocked hash.
//
// The image is decoded straight to 32x32 greyscale (sharp shrinks JPEG and WebP while decoding, so the full
// pixels are never held), first frame only, EXIF orientation applied, transparency over white. Its 2-D DCT's
// lowest 8x8 frequencies are kept; each is one bit: above the median of the 63 that are not the mean (DC),
// or not. pHash was chosen over dHash (9x8 gradients) by measurement (docs/MODERATION.md): a copy resized
// to 70 % and re-encoded as JPEG q=60 moved by fewer bits, and unrelated images stayed further apart.
import { errors } from '#lib/core/errors.ts';
import { loadSharp } from '#lib/files/sharp.ts';

export interface PerceptualHash {
  /** 64 bits as 16 lower-case hex digits. */
  hash: string;
  /**
   * False when the image is too plain to be told by its likeness: a one-colour image, a faint gradient, a
   * flat drawing of a shape or two. Its bits are then decided by noise, not by the picture (a copy of it
   * lands anywhere, and unrelated plain images land near each other): such a hash must never be blocked.
   */
  informative: boolean;
}

/** The side the image is decoded to, and the side of the block of low frequencies kept. */
const SIDE = 32;
const LOW = 8;

/**
 * A coefficient this close to the median (in grey levels: each coefficient is scaled as the orthonormal
 * DCT's, 2/SIDE) decides its bit by noise: recompression moves coefficients by about this much.
 */
const UNDECIDED_MARGIN = 1;

/**
 * At most this many of the 63 bits may be undecided for the hash to be informative. Measured: photo-like
 * and drawn scenes (text on white included) have 1 to 3; a one-colour image 63, a faint gradient 58, a
 * dot on white 48, a circle or two halves of flat colour 43 to 56, whose copies moved by 8 to 34 bits.
 */
const MAX_UNDECIDED = 8;

/** COSINES[u][x]: the DCT-II basis, cos((2x + 1) u pi / 2 SIDE), for the LOW frequencies kept. */
const COSINES = Array.from({ length: LOW }, (_, u) =>
  Float64Array.from({ length: SIDE }, (_, x) => Math.cos(((2 * x + 1) * u * Math.PI) / (2 * SIDE))),
);

/** The image's 32x32 greyscale pixels, row by row; an image sharp cannot read is 422. */
async function greyPixels(bytes: Buffer): Promise<Uint8Array> {
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(bytes, {
      failOn: 'error',
      sequentialRead: true,
      autoOrient: true,
      pages: 1,
    })
      .flatten({ background: '#ffffff' })
      .greyscale()
      .resize(SIDE, SIDE, { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 1) throw new Error(`expected one channel, got ${info.channels}`);
    return data;
  } catch (error) {
    throw errors.unprocessable('image: cannot be decoded to compare it with the block list', {
      cause: String(error),
    });
  }
}

/** The LOW x LOW lowest frequencies of the 2-D DCT, row-major (v * LOW + u), scaled to grey levels. */
function lowFrequencies(pixels: Uint8Array): Float64Array {
  const rows = new Float64Array(LOW * SIDE); // [u][y]: each row's DCT along x
  for (let u = 0; u < LOW; u += 1) {
    const basis = COSINES[u]!;
    for (let y = 0; y < SIDE; y += 1) {
      let sum = 0;
      for (let x = 0; x < SIDE; x += 1) sum += basis[x]! * pixels[y * SIDE + x]!;
      rows[u * SIDE + y] = sum;
    }
  }
  const out = new Float64Array(LOW * LOW);
  for (let v = 0; v < LOW; v += 1) {
    const basis = COSINES[v]!;
    for (let u = 0; u < LOW; u += 1) {
      let sum = 0;
      for (let y = 0; y < SIDE; y += 1) sum += basis[y]! * rows[u * SIDE + y]!;
      out[v * LOW + u] = (sum * 2) / SIDE;
    }
  }
  return out;
}

/** The image's pHash: 64 bits, each a low frequency above the median of the 63 that are not DC. */
export async function perceptualHash(bytes: Buffer): Promise<PerceptualHash> {
  const coefficients = lowFrequencies(await greyPixels(bytes));
  const ac = [...coefficients.subarray(1)].sort((a, b) => a - b);
  const median = ac[(ac.length - 1) / 2]!;
  let bits = 0n;
  for (const coefficient of coefficients) bits = (bits << 1n) | (coefficient > median ? 1n : 0n);
  const undecided = ac.filter((value) => Math.abs(value - median) < UNDECIDED_MARGIN).length;
  return { hash: bits.toString(16).padStart(16, '0'), informative: undecided <= MAX_UNDECIDED };
}

/** A 64-bit hash as 16 lower-case hex digits, as perceptualHash writes it. */
export const isPerceptualHash = (value: string): boolean => /^[0-9a-f]{16}$/.test(value);

/** How many of the 64 bits differ between two hashes (16 hex digits each). */
export function hammingDistance(a: string, b: string): number {
  if (!isPerceptualHash(a) || !isPerceptualHash(b)) {
    throw errors.badRequest('hash: must be 16 lower-case hexadecimal digits');
  }
  let diff = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let count = 0;
  for (; diff > 0n; diff &= diff - 1n) count += 1;
  return count;
}
