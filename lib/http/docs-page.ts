// GET /docs: the API document rendered on the server as one self-contained page (no script, no CDN).
import { createHash } from 'node:crypto';
import { escapeHtml } from '#lib/platform/html.ts';

type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

// The page's one style sheet, inline; the policy below allows exactly it (by its hash) and nothing else.
const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;font-size:13px}
section{border-top:1px solid #ddd;padding:.5rem 0}
.m{padding:0 .3rem;border-radius:3px;color:#fff;background:#555}.get{background:#2b7}.post{background:#37c}
.put,.patch{background:#c80}.delete{background:#c33}
`;

/**
 * The page's Content-Security-Policy: no script, no image, no frame, no form, nothing fetched; its own
 * style sheet only. The document's text is escaped, and this holds even if an escape were missed.
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function pretty(value: unknown): string {
  return `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
}

function securityOf(operation: Json): string {
  const security = (operation.security as Array<Record<string, unknown>> | undefined) ?? [];
  if (security.length === 0) return 'none';
  return security.map((entry) => Object.keys(entry).join(' + ')).join(' or ');
}

function renderOperation(method: string, path: string, operation: Json): string {
  const responses = Object.entries((operation.responses as Record<string, Json>) ?? {});
  const success = responses.filter(([status]) => status.startsWith('2'));
  const failures = responses.filter(([status]) => !status.startsWith('2')).map(([status]) => status);
  const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  return [
    `<section id="${escapeHtml(String(operation.operationId ?? ''))}">`,
    `<h3><code class="m ${method}">${method.toUpperCase()}</code> <code>${escapeHtml(path)}</code></h3>`,
    operation.summary ? `<p>${escapeHtml(String(operation.summary))}</p>` : '',
    operation.description ? `<p>${escapeHtml(String(operation.description))}</p>` : '',
    `<p>Credentials: ${escapeHtml(securityOf(operation))}</p>`,
    parameters.length > 0
      ? `<p>Parameters: ${parameters
          .map((parameter) => `<code>${escapeHtml(`${parameter.name} (${parameter.in})`)}</code>`)
          .join(', ')}</p>`
      : '',
    body
      ? Object.entries(body)
          .map(
            ([type, content]) =>
              `<p>Body (${escapeHtml(type)})</p>${content.schema ? pretty(content.schema) : ''}`,
          )
          .join('')
      : '',
    ...success.map(([status, response]) => {
      const content = response.content as Record<string, Json> | undefined;
      const schema = content?.['application/json']?.schema;
      return `<p>${escapeHtml(status)}: ${escapeHtml(String(response.description ?? ''))}</p>${schema ? pretty(schema) : ''}`;
    }),
    failures.length > 0
      ? `<p>Errors (the envelope, code = status): ${escapeHtml(failures.join(', '))}</p>`
      : '',
    '</section>',
  ].join('\n');
}

export function renderDocsPage(document: Json): string {
  const info = (document.info as Json | undefined) ?? {};
  const paths = (document.paths as Record<string, Json> | undefined) ?? {};
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const tag = ((operation.tags as string[] | undefined) ?? ['other'])[0]!;
      byTag.set(tag, [...(byTag.get(tag) ?? []), renderOperation(method, path, operation)]);
    }
  }
  const sections = [...byTag.entries()].map(
    ([tag, operations]) => `<h2 id="${escapeHtml(tag)}">${escapeHtml(tag)}</h2>\n${operations.join('\n')}`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(String(info.title ?? 'API'))}</title>
<style>${STYLE}</style></head><body>
<h1>${escapeHtml(String(info.title ?? 'API'))} <small>${escapeHtml(String(info.version ?? ''))}</small></h1>
<p>${escapeHtml(String(info.description ?? ''))}</p>
<p>The machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</p>
${sections.join('\n')}
</body></html>`;
}
