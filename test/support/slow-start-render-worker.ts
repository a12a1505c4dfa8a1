// A render process on a loaded machine: Node and sharp take 1.5 s to be ready (test/unit/files/render-processes).
import { setTimeout as sleep } from 'node:timers/promises';

await sleep(1500);
await import('#lib/files/render-worker.ts');
