// The on-function classifier with its real model (nsfwjs MobileNetV2 on TensorFlow.js, loaded from the
// package), on synthetic images made here: a drawing, photo-like JPEGs, an animated GIF, a rotated JPEG and a
// 24-megapixel photo. Nothing explicit: the tests check the answer's shape and its invariants (every class,
// probabilities summing to 1, score = Porn + Hentai + Sexy, the same answer twice), what the model is shown
// (the first frame, turned as EXIF says, a header over the pixel limit refused) and that no tensor leaks.
import * as tf from '@tensorflow/tfjs';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Classification, type Classifier, classifierFor } from '#lib/moderation/classifier.ts';
import { animatedGif, notAnImage, photoJpeg, truncated } from '#test/support/images.ts';

const OPTIONS = { maxInputPixels: 50_000_000, region: 'us-east-1' };
const CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'];

/** A flat-colour drawing: a sky, a sun, a house with a roof and a door, grass. */
function drawingPng(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480">
    <rect width="640" height="480" fill="#8fd3ff"/>
    <circle cx="520" cy="100" r="60" fill="#ffd800"/>
    <rect y="380" width="640" height="100" fill="#3cb043"/>
    <rect x="180" y="240" width="220" height="150" fill="#d2691e" stroke="#000" stroke-width="6"/>
    <polygon points="160,250 290,140 420,250" fill="#b22222" stroke="#000" stroke-width="6"/>
    <rect x="265" y="310" width="50" height="80" fill="#5a3a1a" stroke="#000" stroke-width="4"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

function scoreOf(answer: Classification, name: string): number {
  const label = answer.labels.find((entry) => entry.name === name);
  if (!label) throw new Error(`no ${name} in ${JSON.stringify(answer.labels)}`);
  return label.score;
}

/** The invariants of every nsfwjs answer. */
function expectWellFormed(answer: Classification): void {
  expect(answer.model).toBe('nsfwjs MobileNetV2 224');
  expect(answer.labels.map((label) => label.name).sort()).toEqual(CLASSES);
  for (const label of answer.labels) {
    expect(label.score).toBeGreaterThanOrEqual(0);
    expect(label.score).toBeLessThanOrEqual(1);
  }
  const total = answer.labels.reduce((sum, label) => sum + label.score, 0);
  expect(total).toBeCloseTo(1, 4);
  expect(answer.score).toBeGreaterThanOrEqual(0);
  expect(answer.score).toBeLessThanOrEqual(1);
  expect(answer.score).toBeCloseTo(
    scoreOf(answer, 'Porn') + scoreOf(answer, 'Hentai') + scoreOf(answer, 'Sexy'),
    6,
  );
}

const topClass = (answer: Classification) =>
  answer.labels.reduce((top, label) => (label.score > top.score ? label : top)).name;

describe('the nsfwjs classifier, with its real model', () => {
  let classifier: Classifier;

  beforeAll(async () => {
    classifier = await classifierFor('nsfwjs', OPTIONS);
    // The model loads on the first image; later tests then time only their own work.
    await classifier.classify(await photoJpeg(64, 48));
  }, 120_000);

  it('scores all five classes of a drawing, and calls it a drawing or neutral, the same way twice', async () => {
    const drawing = await drawingPng();
    const answer = await classifier.classify(drawing);
    expectWellFormed(answer);
    expect(['Drawing', 'Neutral']).toContain(topClass(answer));
    expect(await classifier.classify(drawing)).toEqual(answer);
  });

  it('scores a photo-like JPEG, the same way twice', async () => {
    const photo = await photoJpeg(800, 600);
    const answer = await classifier.classify(photo);
    expectWellFormed(answer);
    expect(await classifier.classify(photo)).toEqual(answer);
  });

  it("classifies an animated GIF's first frame only", async () => {
    const gif = await animatedGif(240, 180, 4);
    const frame = (page: number) => sharp(gif, { page }).png().toBuffer();
    const answer = await classifier.classify(gif);
    expectWellFormed(answer);
    // The first frame alone, as a still PNG: the same pixels shown to the model, the same answer.
    expect(await classifier.classify(await frame(0))).toEqual(answer);
    // Another frame (another colour) is another picture: the answer above is not that frame's.
    expect((await classifier.classify(await frame(2))).labels).not.toEqual(answer.labels);
  });

  it('turns the image as its EXIF orientation says before classifying it', async () => {
    // A photo stored 600x400 with Orientation 6: shown 400 wide and 600 high, turned a quarter clockwise.
    const rotated = await sharp(await photoJpeg(600, 400, 3))
      .withMetadata({ orientation: 6 })
      .jpeg({ quality: 90 })
      .toBuffer();
    const answer = await classifier.classify(rotated);
    expectWellFormed(answer);
    // The same picture turned into its pixels (no orientation left to apply): the same scores, within the
    // resampling's difference (about 0.001 here); the stored pixels as they lie differ by about 0.1.
    const shown = await classifier.classify(await sharp(rotated).autoOrient().png().toBuffer());
    const stored = await classifier.classify(await sharp(rotated).png().toBuffer());
    for (const name of CLASSES)
      expect(Math.abs(scoreOf(answer, name) - scoreOf(shown, name))).toBeLessThan(0.01);
    expect(Math.abs(scoreOf(answer, 'Neutral') - scoreOf(stored, 'Neutral'))).toBeGreaterThan(0.03);
  });

  it('classifies a 24-megapixel photo, and refuses a header over the pixel limit', async () => {
    const large = await photoJpeg(6000, 4000);
    expectWellFormed(await classifier.classify(large));
    const strict = await classifierFor('nsfwjs', { ...OPTIONS, maxInputPixels: 6000 * 4000 - 1 });
    await expect(strict.classify(large)).rejects.toThrow(/pixel limit/);
  }, 60_000);

  it('classifies what a truncated JPEG decodes to, and refuses bytes that are no image', async () => {
    // Browsers show a cut-off JPEG's top rows: it must not escape classification by failing the decoder.
    expectWellFormed(await classifier.classify(truncated(await photoJpeg(800, 600, 5), 0.6)));
    await expect(classifier.classify(notAnImage)).rejects.toThrow();
  });

  it('leaves no tensor behind over 100 images', async () => {
    const photo = await photoJpeg(320, 240, 7);
    await classifier.classify(photo);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 100; i += 1) await classifier.classify(photo);
    expect(tf.memory().numTensors).toBe(before);
  }, 120_000);
});
