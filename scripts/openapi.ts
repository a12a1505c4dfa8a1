// `npm run openapi`: writes docs/openapi.json from the route table and every group's route schemas
// (`--check` fails instead when the committed file is not current).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApiDocument } from './openapi-document.ts';

const FILE = join(fileURLToPath(new URL('..', import.meta.url)), 'docs', 'openapi.json');

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const text = `${JSON.stringify(await generateApiDocument(), null, 2)}\n`;
  if (process.argv.includes('--check')) {
    // Compared as data: a formatter may lay the committed file out differently.
    if (JSON.stringify(JSON.parse(readFileSync(FILE, 'utf8'))) !== JSON.stringify(JSON.parse(text))) {
      console.error('docs/openapi.json is not current: run npm run openapi');
      process.exit(1);
    }
    return;
  }
  writeFileSync(FILE, text);
  console.log(`Wrote ${FILE}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
