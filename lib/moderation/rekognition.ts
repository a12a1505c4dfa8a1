// The `rekognition` provider: Amazon Rekognition's DetectModerationLabels on a bounded JPEG of the image's
// first frame (at most 1024 pixels a side: a few hundred kilobytes, far under the API's 5 MB for Bytes).
import { detectModerationLabels } from '#lib/platform/aws/rekognition.ts';
import type { Classification, Classifier } from './classifier.ts';
import { firstFrame } from './image-input.ts';

/** The longest side of the JPEG sent. */
export const REKOGNITION_MAX_SIDE = 1024;

/**
 * Labels under 1 % confidence are not asked for: thresholds are fractions of 1 that such a label could not
 * reach, and the service's own default (50 %) would hide labels a lower threshold must see.
 */
const MIN_CONFIDENCE = 1;

/** The bounded JPEG the service is sent: never enlarged, flattened on white, without metadata. */
async function boundedJpeg(image: Uint8Array, maxInputPixels: number): Promise<Buffer> {
  const pipeline = await firstFrame(image, maxInputPixels, (frame) =>
    frame.resize(REKOGNITION_MAX_SIDE, REKOGNITION_MAX_SIDE, { fit: 'inside', withoutEnlargement: true }),
  );
  return pipeline.jpeg({ quality: 85 }).toBuffer();
}

/**
 * Rekognition's classifier. Labels are the service's (top-level and below) with confidence / 100; `score` is
 * the highest top-level label's (each top-level category, e.g. Explicit or Violence, is the service's own
 * judgment of that kind of content; 0 when it found none).
 */
export function rekognitionClassifier(options: { maxInputPixels: number; region: string }): Classifier {
  return {
    async classify(image: Buffer): Promise<Classification> {
      const jpeg = await boundedJpeg(image, options.maxInputPixels);
      const answer = await detectModerationLabels({ region: options.region }, jpeg, MIN_CONFIDENCE);
      const topLevel = answer.labels.filter((label) => label.parentName === '');
      return {
        labels: answer.labels.map((label) => ({ name: label.name, score: label.confidence / 100 })),
        score: Math.max(0, ...topLevel.map((label) => label.confidence / 100)),
        model: `rekognition ${answer.modelVersion}`,
      };
    },
  };
}
