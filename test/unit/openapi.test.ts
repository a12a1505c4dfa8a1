// The API document: generated from the route table and the route schemas, committed as docs/openapi.json,
// valid OpenAPI 3.1, and naming every route with its credentials.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/http/routes.ts';
import { generateApiDocument } from '../../scripts/openapi-document.ts';

// biome-ignore lint/suspicious/noExplicitAny: a JSON document read by shape
const committed = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as Record<string, any>;

describe('the API document', () => {
  it('is current: docs/openapi.json is what npm run openapi generates', async () => {
    expect(await generateApiDocument()).toEqual(committed);
  });

  it('validates as OpenAPI 3.1', async () => {
    const result = await new Validator().validate(committed as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(committed.openapi).toBe('3.1.0');
  });

  it('documents every route of the table with its credentials and the error envelope', () => {
    for (const route of ROUTES) {
      const operation = committed.paths[route.path.replace('{key+}', '{key}')]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      const schemes = (operation.security as Array<Record<string, unknown>>).flatMap((entry) =>
        Object.keys(entry),
      );
      if (route.auth === 'uploader') expect(schemes.sort()).toEqual(['apiToken', 'session']);
      else if (route.auth === 'session' || route.auth === 'admin') expect(schemes).toEqual(['session']);
      else expect(schemes).toEqual([]);
      expect(operation.responses['500'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ErrorEnvelope',
      });
    }
  });
});
