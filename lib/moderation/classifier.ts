// Moderation's classifiers behind one interface (docs/DESIGN.md 25): the on-function model (nsfwjs, its
// model in its npm package) or Amazon Rekognition's DetectModerationLabels, chosen by `moderation.provider`.
// Each classifies a bounded rendition of the image's first frame, never the original's full pixels. Any
// failure throws (an unreadable image, a header over the pixel limit, the service refusing): the caller
// leaves the file in its stated state and tries again.

/** What a classifier says about one image. */
export interface Classification {
  /** Every class the model has (nsfwjs) or every label the service answered (Rekognition), scores 0..1. */
  labels: Array<{ name: string; score: number }>;
  /** The one number the policy compares with its thresholds, 0..1 (how each classifier makes it: its module). */
  score: number;
  /** Which model answered, e.g. `nsfwjs MobileNetV2 224` or `rekognition 7.0`. */
  model: string;
}

export interface Classifier {
  classify(image: Buffer): Promise<Classification>;
}

export type ClassifierProvider = 'nsfwjs' | 'rekognition';

export interface ClassifierOptions {
  /** images.max_input_pixels: a header over it is not decoded. */
  maxInputPixels: number;
  /** Rekognition's region (aws.region). */
  region: string;
}

/** The provider's classifier; only its own code is loaded (the model and TensorFlow.js for nsfwjs alone). */
export async function classifierFor(
  provider: ClassifierProvider,
  options: ClassifierOptions,
): Promise<Classifier> {
  if (provider === 'nsfwjs') {
    const { nsfwClassifier } = await import('./nsfw-model.ts');
    return nsfwClassifier(options);
  }
  const { rekognitionClassifier } = await import('./rekognition.ts');
  return rekognitionClassifier(options);
}
