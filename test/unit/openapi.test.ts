// The API document: generated from the route table and the route schemas, committed as docs/openapi.json,
// valid OpenAPI 3.1, and naming every route with its credentials.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/http/routes.ts';
import { pathItemOf } from '#test/support/contract.ts';
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
      const operation = pathItemOf(committed, route.path.replace('{key+}', '{key}'))?.[
        route.method.toLowerCase()
      ];
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

  it('shows each route once: an alias is the entry of its route, reachable from the alias prefix as a server', () => {
    const aliases = ROUTES.filter((route) => route.aliasOf);
    expect(aliases.length).toBeGreaterThan(0);
    for (const route of aliases) {
      expect(committed.paths[route.path], route.path).toBeUndefined();
      const item = committed.paths[route.aliasOf!];
      expect(item[route.method.toLowerCase()], route.aliasOf).toBeDefined();
      expect(item.servers.map((server: { url: string }) => server.url)).toEqual(['/', '/api/v1']);
    }
    const operations = Object.values(committed.paths).flatMap((item) =>
      Object.keys(item as object).filter((key) => key !== 'servers'),
    );
    expect(operations).toHaveLength(ROUTES.length - aliases.length);
  });

  it('files every operation under one of its named sections, in reading order', () => {
    const named = (committed.tags as Array<{ name: string }>).map((tag) => tag.name);
    for (const [path, item] of Object.entries(
      committed.paths as Record<string, Record<string, { tags?: string[] }>>,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'servers') continue;
        expect(operation.tags, `${method} ${path}`).toHaveLength(1);
        expect(named).toContain(operation.tags![0]);
      }
    }
  });
});
