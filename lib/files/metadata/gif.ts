// GIF: drops comment, plain-text and application extensions (XMP travels in an application extension,
// GPS with it) except the looping and ICC ones, and whatever follows the trailer; image descriptors, colour
// tables, graphic controls and the LZW data stay byte for byte. A stream that stops after a whole block gets
// its trailer; one that stops inside a block is refused.
import { Splice } from './splice.ts';
import { countPiece, MalformedImage, readerWork, refused, type StripResult } from './types.ts';

const EXTENSION = 0x21;
const IMAGE = 0x2c;
const TRAILER = 0x3b;
const GRAPHIC_CONTROL = 0xf9;
const COMMENT = 0xfe;
const PLAIN_TEXT = 0x01;
const APPLICATION = 0xff;
const SCREEN_DESCRIPTOR_END = 13; // signature (6) + logical screen descriptor (7)

// Application extensions that change how the image shows: the loop count (Netscape's, and its older twin)
// and the colour profile. Every other one (XMP DataXMP, editors' private data) is metadata.
const KEPT_APPLICATIONS = new Set(['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012']);

/** Size of a colour table whose flag and size sit in `packed` (bit 7, bits 0-2); 0 when absent. */
function colourTable(packed: number): number {
  return packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0;
}

/** The end of the sub-blocks starting at `at` (just past their 0 terminator). */
function subBlocksEnd(bytes: Buffer, at: number): number {
  let next = at;
  for (;;) {
    if (next >= bytes.length) throw new MalformedImage('data sub-blocks run past the end');
    const size = bytes[next]!;
    readerWork.pieces += 1; // each sub-block moves on by at least its size byte: bounded by the file
    next += 1 + size;
    if (size === 0) return next;
  }
}

export function stripGif(bytes: Buffer): StripResult {
  const signature = bytes.toString('latin1', 0, 6);
  if (signature !== 'GIF87a' && signature !== 'GIF89a') return refused('GIF: no GIF signature');
  if (bytes.length < SCREEN_DESCRIPTOR_END) return refused('GIF: truncated screen descriptor');
  const out = new Splice(bytes);
  let at = SCREEN_DESCRIPTOR_END + colourTable(bytes[10]!);
  if (at > bytes.length) return refused('GIF: global colour table runs past the end');
  out.keep(0, at);
  let images = 0;
  let pieces = 0;
  for (;;) {
    pieces = countPiece(pieces);
    if (at >= bytes.length) {
      // Many writers and truncating tools leave the trailer out; decoders do without it. A whole stream
      // stored gets one, so nothing after it can later be read as part of the image.
      if (images === 0) return refused('GIF: no image');
      out.insert(Buffer.from([TRAILER]));
      break;
    }
    const introducer = bytes[at]!;
    if (introducer === TRAILER) {
      if (images === 0) return refused('GIF: no image');
      out.keep(at, at + 1);
      if (at + 1 < bytes.length) out.note('data after the trailer');
      break;
    }
    if (introducer === IMAGE) {
      if (at + 10 > bytes.length) return refused('GIF: truncated image descriptor');
      const dataAt = at + 10 + colourTable(bytes[at + 9]!);
      // The LZW minimum code size, then the image's sub-blocks.
      if (dataAt + 1 > bytes.length) return refused('GIF: truncated image');
      const end = subBlocksEnd(bytes, dataAt + 1);
      out.keep(at, end);
      images += 1;
      at = end;
      continue;
    }
    if (introducer !== EXTENSION)
      return refused(`GIF: unknown block 0x${introducer.toString(16)} at byte ${at}`);
    if (at + 2 > bytes.length) return refused('GIF: truncated extension');
    const label = bytes[at + 1]!;
    const end = subBlocksEnd(bytes, at + 2);
    if (label === GRAPHIC_CONTROL) out.keep(at, end);
    else if (label === APPLICATION) {
      // The first sub-block is the 11-byte identifier and authentication code.
      const identified = bytes[at + 2] === 11 && at + 14 <= end;
      const name = identified ? bytes.toString('latin1', at + 3, at + 14) : '';
      if (KEPT_APPLICATIONS.has(name)) out.keep(at, end);
      else out.note(name === 'XMP DataXMP' ? 'XMP' : 'application extension');
    } else if (label === COMMENT) out.note('comment');
    else if (label === PLAIN_TEXT) out.note('plain text extension');
    else out.note('unknown extension');
    at = end;
  }
  return { kind: 'stripped', bytes: out.build(), removed: out.removed };
}
