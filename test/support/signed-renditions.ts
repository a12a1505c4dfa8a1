// A rendition query signed as POST /api/v1/files/{id}/rendition-url signs it, under the local secret file the
// functions of the tests read (docs/IMAGES.md "Presets and signatures"): for tests of what a rendition is,
// not of who may ask for it. A preset, or a query that does not parse, is left as written.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureLocalOriginSecret } from '#infra/local/front-door.ts';
import { renditionSignature } from '#lib/files/rendition-access.ts';
import { parseRenditionQuery, renditionQueryOf } from '#lib/files/rendition-query.ts';
import { parseOriginSecrets } from '#lib/http/front-door.ts';
import { config } from '#lib/platform/config/index.ts';

/** `dataDir`: the data folder of the server asked (the tests' own by default). */
export function signedQuery(key: string, query: string, dataDir = config.data_dir): string {
  const read = renditionQueryOf(query);
  if (read.size === 0 || read.has('p') || read.has('s')) return query;
  let params: ReturnType<typeof parseRenditionQuery>;
  try {
    params = parseRenditionQuery(read, config.images);
  } catch {
    return query;
  }
  const file = ensureLocalOriginSecret(resolve(dataDir));
  const { current } = parseOriginSecrets(readFileSync(file, 'utf8'));
  return `${query}&s=${renditionSignature(current, key, params)}`;
}
