// The console's API client is typed from the API document (web/src/api/schema.d.ts, `npm run openapi:web`):
// a route or schema change that was not carried into the console's types would type-check against a stale
// interface, so the committed types must be what the committed document generates.
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';

/** Formatting aside (Biome rewrites quotes, separators, line breaks and leading union bars), the same declarations. */
function declarations(source: string): string {
  return (
    source
      .replace(/\/\*\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '')
      .replace(/"/g, "'")
      .replace(/[\s;,]+/g, '')
      // Biome starts a union broken over lines with a `|`.
      .replace(/([:(<=[])\|/g, '$1')
  );
}

describe('the console API types', () => {
  it('are current: web/src/api/schema.d.ts is what npm run openapi:web generates from docs/openapi.json', async () => {
    const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    const generated = astToString(await openapiTS(document));
    const committed = readFileSync('web/src/api/schema.d.ts', 'utf8');

    expect(declarations(committed)).toBe(declarations(generated));
  });
});
