// `npm run config:shape`: writes lib/platform/config/shape.json, the settings' schema as data, which the cold-start
// fast path checks settings against (lib/platform/config/fast-path.ts). `--check` fails instead when the committed
// file is not current (test/unit/config-shape.test.ts does the same inside `npm test`).
import { readFileSync, writeFileSync } from 'node:fs';
import { currentConfigShape, SHAPE_FILE } from '#lib/platform/config/shape.ts';

const text = `${JSON.stringify(currentConfigShape(), null, 2)}\n`;
if (process.argv.includes('--check')) {
  // Compared as data: a formatter may lay the committed file out differently.
  if (JSON.stringify(JSON.parse(readFileSync(SHAPE_FILE, 'utf8'))) !== JSON.stringify(JSON.parse(text))) {
    console.error('lib/platform/config/shape.json is not current: run npm run config:shape');
    process.exit(1);
  }
} else {
  writeFileSync(SHAPE_FILE, text);
  console.log(`Wrote ${SHAPE_FILE}`);
}
