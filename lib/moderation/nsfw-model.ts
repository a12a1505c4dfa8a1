// The on-function classifier: nsfwjs's MobileNetV2 (five classes, 224x224 RGB input) on TensorFlow.js's
// WebAssembly backend. The model's topology and weights ship inside the nsfwjs package (JS modules holding
// JSON and base64) and the backend's .wasm inside @tensorflow/tfjs-backend-wasm: nothing is downloaded, in
// Lambda, under `npm start` or in the tests. The model is loaded once per process, on the first image.
//
// Backend: WASM (SIMD, one thread) runs the model on one image in about 50 ms here (70 ms with the decode of a
// 4000x3000 JPEG: test/perf/moderation.ts) and loads it in about 0.2 s; the pure-JS `cpu` backend took about
// 0.8 s an image and 1 s to load, and prints a hint to install the native backend on its first tensor.
// Bundled, everything but the .wasm goes into the bundle (the model is about 3.5 MB of it); the .wasm files
// (TFJS_WASM_FILES) must sit beside the bundle under node_modules/, where they are looked up from here.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as Tf from '@tensorflow/tfjs';
import type { NSFWJS } from 'nsfwjs/core';
import type { Classification, Classifier } from './classifier.ts';
import { firstFrame } from './image-input.ts';

/** What `Classification.model` says for this classifier. */
export const NSFW_MODEL = 'nsfwjs MobileNetV2 224';

/** The model's input: SIZE x SIZE pixels, three channels. */
const SIZE = 224;
/** nsfwjs's classes: Drawing, Hentai, Neutral, Porn, Sexy. */
const CLASS_COUNT = 5;

/**
 * The classes whose probabilities make `score`: the explicit ones (Porn, Hentai) and the suggestive one
 * (Sexy). The model's softmax splits an image's probability among its five classes, so an explicit image
 * often shares it between two of them (a drawn one between Hentai and Porn, a photo between Porn and Sexy)
 * and no single class need pass a threshold that their sum passes. The sum is the probability that the
 * image is not Drawing or Neutral: one number from 0 to 1 the policy compares with its thresholds.
 */
const UNSAFE = new Set(['Porn', 'Hentai', 'Sexy']);

/**
 * The backend's binaries, as module paths: SIMD (every Node since 16) and the plain one the backend picks
 * without SIMD. Threads are never used in Node, so the threaded binary is not needed.
 */
export const TFJS_WASM_FILES = [
  '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm',
  '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm',
] as const;

/** Their directory, resolved from this module: the package's own, or the copy beside a bundle. */
function wasmDirectory(): string {
  return `${dirname(createRequire(import.meta.url).resolve(TFJS_WASM_FILES[0]))}/`;
}

interface LoadedModel {
  tf: typeof Tf;
  model: NSFWJS;
}

let loading: Promise<LoadedModel> | undefined;

/** The model, loaded on first use and kept for the life of the process; a failed load is tried again. */
function loadModel(): Promise<LoadedModel> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(): Promise<LoadedModel> {
  const [tf, { NSFWJS }, { MobileNetV2Model }, { setWasmPaths }] = await Promise.all([
    import('@tensorflow/tfjs'),
    import('nsfwjs/core'),
    import('nsfwjs/models/mobilenet_v2'),
    import('@tensorflow/tfjs-backend-wasm'),
  ]);
  const directory = wasmDirectory();
  // The backend's Emscripten glue reads `__dirname` as it starts in Node; CommonJS gives each module its own,
  // an ESM bundle defines none (a ReferenceError that fails the backend). Only its presence matters: the
  // binaries are found through setWasmPaths.
  (globalThis as { __dirname?: string }).__dirname ??= directory;
  setWasmPaths(directory);
  // A backend that fails to start is only logged (a warning with its error), then reported false.
  if (!(await tf.setBackend('wasm'))) {
    throw new Error('moderation: the TensorFlow.js wasm backend did not start (its error is logged above)');
  }
  // Production mode skips TensorFlow.js's debug checks and its console hints.
  tf.enableProdMode();
  const [{ default: json }, weights] = await Promise.all([
    MobileNetV2Model.modelJson(),
    Promise.all(MobileNetV2Model.weightBundles.map(async (bundle) => (await bundle()).default)),
  ]);
  // The model's JSON and weights handed to TensorFlow.js from memory, rather than through nsfwjs's `load`,
  // which prints a hint about hosting the model on every load.
  const weightData = new Uint8Array(Buffer.concat(weights.map((base64) => Buffer.from(base64, 'base64'))));
  const model = new NSFWJS(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
      weightData: weightData.buffer,
    }),
    { size: SIZE },
  );
  await model.load();
  return { tf, model };
}

/** The image as the model's input: SIZE x SIZE RGB bytes, stretched to fill (the model was trained so). */
async function modelInput(image: Uint8Array, maxInputPixels: number): Promise<Buffer> {
  const pipeline = await firstFrame(image, maxInputPixels, (frame) =>
    frame.resize(SIZE, SIZE, { fit: 'fill' }),
  );
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.width !== SIZE || info.height !== SIZE || info.channels !== 3) {
    throw new Error(`moderation: the model's input came out ${info.width}x${info.height}x${info.channels}`);
  }
  return data;
}

/** nsfwjs's classifier; `maxInputPixels` bounds the decode (images.max_input_pixels). */
export function nsfwClassifier(options: { maxInputPixels: number }): Classifier {
  return {
    async classify(image: Buffer): Promise<Classification> {
      const [{ tf, model }, pixels] = await Promise.all([
        loadModel(),
        modelInput(image, options.maxInputPixels),
      ]);
      const input = tf.tensor3d(pixels, [SIZE, SIZE, 3], 'int32');
      let predictions: Awaited<ReturnType<NSFWJS['classify']>>;
      try {
        predictions = await model.classify(input, CLASS_COUNT);
      } finally {
        input.dispose();
      }
      const labels = predictions.map(({ className, probability }) => ({
        name: className,
        score: probability,
      }));
      const score = labels.reduce((sum, label) => sum + (UNSAFE.has(label.name) ? label.score : 0), 0);
      return { labels, score: Math.min(1, score), model: NSFW_MODEL };
    },
  };
}
