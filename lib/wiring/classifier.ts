// The moderation worker's classifier (docs/MODERATION.md): nsfwjs on the function (no need: the model ships
// in the bundle), or Amazon Rekognition (need `moderationApi`), as `moderation.provider` says. Loaded on the
// first file, once per container; a failed load is tried again on the next.
import type { Classifier } from '#lib/moderation/classifier.ts';
import { classifierFor } from '#lib/moderation/classifier.ts';
import { type GroupResources, once } from './resources.ts';

export function classifierOf(resources: GroupResources): () => Promise<Classifier> {
  const { moderation, images, aws } = resources.settings;
  const loader = () => {
    let loading: Promise<Classifier> | undefined;
    return (): Promise<Classifier> => {
      loading ??= classifierFor(moderation.provider, {
        maxInputPixels: images.max_input_pixels,
        region: aws.region,
      }).catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return loading as Promise<Classifier>;
    };
  };
  return moderation.provider === 'rekognition' ? once(resources, 'moderationApi', loader) : loader();
}
