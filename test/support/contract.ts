// The contract test: every answer a test receives is checked against the API document (docs/openapi.json):
// its status is one the route documents, an error is the envelope with code = status, and a success's
// `data` matches the route's schema. What does not match is named, so drift fails the suite.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, read by shape
type Json = Record<string, any>;

const DOCUMENT_FILE = join(fileURLToPath(new URL('../..', import.meta.url)), 'docs', 'openapi.json');

export interface ContractAnswer {
  /** `METHOD /path` as API Gateway names the route, or `$default` for a request no route matched. */
  routeKey: string;
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

export interface Contract {
  /** The problems with this answer (empty when it matches the document). */
  check(answer: ContractAnswer): string[];
}

export function loadApiDocument(): Json {
  return JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
}

/**
 * The document's entry for a path: its own, or the entry it is an alias of (an entry whose `servers` name
 * the prefix, as the account routes under /api/v1 are documented once).
 */
export function pathItemOf(document: Json, path: string): Json | undefined {
  const own = document.paths?.[path] as Json | undefined;
  if (own) return own;
  for (const [documented, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    const prefixes = ((item.servers ?? []) as Array<{ url: string }>).map((server) => server.url);
    if (prefixes.some((prefix) => prefix !== '/' && `${prefix}${documented}` === path)) return item;
  }
  return undefined;
}

export function createContract(document: Json = loadApiDocument()): Contract {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const errorEnvelope = ajv.compile(document.components.schemas.ErrorEnvelope);
  const compiled = new Map<object, ValidateFunction>();
  const validatorOf = (schema: object) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  const explain = (validate: ValidateFunction) =>
    (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message}`).join('; ');

  return {
    check({ routeKey, status, headers, body }) {
      const contentType = headers['content-type'] ?? '';
      const parsed = () => {
        try {
          return JSON.parse(body) as unknown;
        } catch {
          return undefined;
        }
      };
      const where = `${routeKey} answered ${status}`;
      const isEnvelope = contentType.startsWith('application/json');
      if (routeKey === '$default') {
        if (status !== 404) return [`${where}: only 404 is documented`];
        return isEnvelope && errorEnvelope(parsed()) ? [] : [`${where} without the error envelope`];
      }
      const [method, path] = routeKey.split(' ') as [string, string];
      const operation = pathItemOf(document, path.replace(/\{(\w+)\+\}/g, '{$1}'))?.[method.toLowerCase()] as
        | Json
        | undefined;
      if (!operation) return [`${routeKey} is not in the document`];
      const response = operation.responses?.[String(status)] as Json | undefined;
      if (!response) return [`${where}, which the document does not list for it`];
      if (status >= 400) {
        const documentedTypes = Object.keys((response.content as Json | undefined) ?? {});
        const envelope = parsed() as { code?: number } | undefined;
        if (isEnvelope && envelope && typeof envelope.code === 'number' && envelope.code !== 0) {
          // An error envelope, whatever the route: its code is the status.
          if (!errorEnvelope(envelope)) return [`${where}: ${explain(errorEnvelope)}`];
          if (envelope.code !== status) return [`${where} but its envelope says ${envelope.code}`];
          return [];
        }
        // Otherwise the route's own format (a channel's reply, a page), if the document says it has one.
        const own = documentedTypes.filter((type) => type !== 'application/json');
        // channel_b refuses with its own JSON ({code: "FAIL", message}), which is not the envelope.
        if (own.length > 0 && (own.some((type) => contentType.startsWith(type)) || isEnvelope)) return [];
        return [`${where} with content-type ${contentType || '(none)'}, not the error envelope`];
      }
      const schema = response.content?.['application/json']?.schema as Json | undefined;
      if (status < 400 && schema) {
        const value = parsed();
        const validate = validatorOf(schema);
        if (!validate(value))
          return [`${where} with data the document does not describe: ${explain(validate)}`];
      }
      return [];
    },
  };
}
