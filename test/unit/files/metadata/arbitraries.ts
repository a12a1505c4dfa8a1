// Byte generators shared by the stripper's property tests (strip.property).
import fc from 'fast-check';

/** Random bytes, at most `maxLength` of them. */
export const noise = (maxLength: number) => fc.uint8Array({ maxLength }).map((bytes) => Buffer.from(bytes));

/** A valid file cut short, overwritten, spliced with noise or with a range deleted. */
export function mutated(valid: Buffer) {
  return fc.oneof(
    fc.nat().map((at) => valid.subarray(0, at % (valid.length + 1))),
    fc.tuple(fc.nat(), noise(8)).map(([at, bytes]) => {
      const copy = Buffer.from(valid);
      copy.set(bytes.subarray(0, Math.max(0, copy.length - (at % copy.length))), at % copy.length);
      return copy;
    }),
    fc.tuple(fc.nat(), noise(32)).map(([at, bytes]) => {
      const cut = at % (valid.length + 1);
      return Buffer.concat([valid.subarray(0, cut), bytes, valid.subarray(cut)]);
    }),
    fc.tuple(fc.nat(), fc.nat({ max: 64 })).map(([at, length]) => {
      const cut = at % (valid.length + 1);
      return Buffer.concat([valid.subarray(0, cut), valid.subarray(cut + length)]);
    }),
  );
}
