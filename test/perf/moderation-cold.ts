// The moderation classifier's cold start (test/perf/moderation.ts bundles this as a function is bundled and
// runs it in a fresh process): one classification of the image file named by the first argument, then the
// times since the process started: when this module began (the bundle parsed) and the first answer; and the
// resident set then (the model loaded), for the function's memory size.
import { readFileSync } from 'node:fs';
import { classifierFor } from '#lib/moderation/classifier.ts';

const ready = performance.now();
const classifier = await classifierFor('nsfwjs', { maxInputPixels: 50_000_000, region: 'us-east-1' });
await classifier.classify(readFileSync(process.argv[2] ?? ''));
const answered = performance.now();
const rss_mib = Math.round(process.memoryUsage().rss / 1024 / 1024);
console.log(`COLD ${JSON.stringify({ ready_ms: ready, first_answer_ms: answered, rss_mib })}`);
