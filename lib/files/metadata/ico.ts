// ICO: every entry that is a PNG goes through the PNG stripper (its text, EXIF and unknown chunks carry
// metadata as in any PNG); BMP entries stay byte for byte. The file is laid out again (header, directory,
// the entries' bytes one after another), so nothing outside an entry (gaps, trailing data) is kept.
import { PNG_SIGNATURE, stripPng } from './png.ts';
import { countPiece, refused, type StripResult } from './types.ts';

const HEADER_BYTES = 6;
const ENTRY_BYTES = 16;

export function stripIco(bytes: Buffer): StripResult {
  if (bytes.length < HEADER_BYTES || bytes.readUInt16LE(0) !== 0 || bytes.readUInt16LE(2) !== 1) {
    return refused('ICO: no icon header');
  }
  const count = bytes.readUInt16LE(4);
  if (count === 0) return refused('ICO: no images');
  const directoryEnd = HEADER_BYTES + count * ENTRY_BYTES;
  if (directoryEnd > bytes.length) return refused('ICO: directory runs past the end');
  const images: Buffer[] = [];
  const removed = new Set<string>();
  let changed = false;
  let expected = directoryEnd; // where the entry's bytes would be if the file were laid out as we write it
  let declared = directoryEnd;
  let pieces = 0;
  for (let index = 0; index < count; index += 1) {
    pieces = countPiece(pieces);
    const entry = HEADER_BYTES + index * ENTRY_BYTES;
    const size = bytes.readUInt32LE(entry + 8);
    const offset = bytes.readUInt32LE(entry + 12);
    if (size === 0 || offset < directoryEnd || offset + size > bytes.length) {
      return refused(`ICO: image ${index + 1} lies outside the file`);
    }
    // Entries sharing bytes would be copied once each: a directory of 65,535 entries naming the whole file
    // would make the output 65,535 times the input.
    declared += size;
    if (declared > bytes.length) return refused('ICO: images overlap');
    let image = bytes.subarray(offset, offset + size);
    if (size >= 8 && image.subarray(0, 8).equals(PNG_SIGNATURE)) {
      const result = stripPng(image);
      if (result.kind === 'refused') return refused(`ICO: image ${index + 1}: ${result.reason}`);
      if (result.kind === 'stripped') {
        for (const label of result.removed) removed.add(`PNG ${label}`);
        if (result.bytes !== image) changed = true;
        image = result.bytes;
      }
    }
    if (offset !== expected) changed = true;
    expected += image.length;
    images.push(image);
  }
  if (expected < bytes.length) {
    removed.add('data outside the images');
    changed = true;
  }
  if (!changed) return { kind: 'stripped', bytes, removed: [] };
  const directory = Buffer.from(bytes.subarray(0, directoryEnd));
  let at = directoryEnd;
  for (let index = 0; index < count; index += 1) {
    const entry = HEADER_BYTES + index * ENTRY_BYTES;
    directory.writeUInt32LE(images[index]!.length, entry + 8);
    directory.writeUInt32LE(at, entry + 12);
    at += images[index]!.length;
  }
  return { kind: 'stripped', bytes: Buffer.concat([directory, ...images]), removed: [...removed] };
}
