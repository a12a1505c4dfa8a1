// Amazon Rekognition's DetectModerationLabels (the `rekognition` moderation provider): the client built once
// per container for its region, loaded only by the moderation worker of a deployment that chose it.
import { DetectModerationLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

const rekognitionClient = /* @__PURE__ */ memoByEndpoint(
  (options: { region: string }): RekognitionClient =>
    captureClient(new RekognitionClient(clientOptions('rekognition', options.region, undefined))),
);

export interface ModerationLabels {
  /** Each label the service found at or above `minConfidence`, its confidence 0..100 as the service says. */
  labels: Array<{ name: string; parentName: string; confidence: number }>;
  /** The moderation model that answered, e.g. `7.0`. */
  modelVersion: string;
}

/** DetectModerationLabels on `image` (JPEG or PNG bytes, at most 5 MB: the API's limit for Bytes). */
export async function detectModerationLabels(
  options: { region: string },
  image: Uint8Array,
  minConfidence: number,
): Promise<ModerationLabels> {
  const answer = await rekognitionClient(options).send(
    new DetectModerationLabelsCommand({ Image: { Bytes: image }, MinConfidence: minConfidence }),
  );
  return {
    labels: (answer.ModerationLabels ?? []).map((label) => ({
      name: label.Name ?? '',
      parentName: label.ParentName ?? '',
      confidence: label.Confidence ?? 0,
    })),
    modelVersion: answer.ModerationModelVersion ?? 'unknown',
  };
}
