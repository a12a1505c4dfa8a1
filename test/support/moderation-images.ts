// Images the moderation tests share: a disguised copy (what an uploader does to slip a taken-down image
// past a byte hash) and drawings whose layouts differ from seed to seed (unrelated images by likeness).
import sharp from 'sharp';

/** What an uploader does to slip a copy past a byte hash: 70 % of the size, JPEG at q=60, no metadata. */
export async function disguised(bytes: Buffer): Promise<Buffer> {
  const { width } = await sharp(bytes).metadata();
  return sharp(bytes, { autoOrient: true })
    .resize(Math.round(width * 0.7))
    .jpeg({ quality: 60 })
    .toBuffer();
}

/** A drawing of shapes over a coloured ground, its layout from `seed`: structurally unlike any other seed's. */
export function drawing(seed: number, width = 800, height = 600): Promise<Buffer> {
  let state = seed * 2654435761 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const colour = () => `rgb(${(next() * 256) | 0},${(next() * 256) | 0},${(next() * 256) | 0})`;
  let shapes = `<rect width="${width}" height="${height}" fill="${colour()}"/>`;
  for (let i = 0; i < 12; i += 1) {
    shapes +=
      next() < 0.5
        ? `<circle cx="${next() * width}" cy="${next() * height}" r="${20 + next() * 150}" fill="${colour()}"/>`
        : `<rect x="${next() * width}" y="${next() * height}" width="${30 + next() * 300}" height="${30 + next() * 300}" fill="${colour()}" transform="rotate(${next() * 90} ${width / 2} ${height / 2})"/>`;
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shapes}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
