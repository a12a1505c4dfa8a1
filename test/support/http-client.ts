// A test's HTTP client of a running service (the local app, npm start); the base URL is read per call.

/** One answer: status, headers, the text as sent, and that text read as JSON (undefined when it is not). */
export interface Answer {
  status: number;
  headers: Headers;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: envelope data of many shapes
  body: any;
}

export interface RequestOptions {
  /** A string, bytes or a form go as they are; anything else is sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as `authorization: Bearer <token>`. */
  token?: string;
}

export interface HttpClient {
  readonly url: string;
  /** A path on this service; a link the service handed out (built from base_url) is moved onto its port. */
  at(pathOrLink: string): string;
  request(method: string, path: string, options?: RequestOptions): Promise<Answer>;
  /** The status beside the envelope's own fields (`code`, `message`, `data`). */
  // biome-ignore lint/suspicious/noExplicitAny: envelope data of many shapes
  api(method: string, path: string, options?: RequestOptions): Promise<any>;
}

function isRawBody(body: unknown): body is NonNullable<RequestInit['body']> {
  return (
    typeof body === 'string' ||
    body instanceof Uint8Array ||
    body instanceof FormData ||
    body instanceof Blob ||
    body instanceof URLSearchParams
  );
}

function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

export function httpClient(baseUrl: () => string): HttpClient {
  const at = (pathOrLink: string) => {
    if (pathOrLink.startsWith('/')) return `${baseUrl()}${pathOrLink}`;
    const link = new URL(pathOrLink);
    return `${baseUrl()}${link.pathname}${link.search}`;
  };
  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<Answer> => {
    const { body, token } = options;
    const headers: Record<string, string> = { ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let sent: RequestInit['body'];
    if (body !== undefined && isRawBody(body)) sent = body;
    else if (body !== undefined) {
      sent = JSON.stringify(body);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
        headers['content-type'] = 'application/json';
      }
    }
    const response = await fetch(at(path), {
      method,
      headers,
      ...(sent === undefined ? {} : { body: sent }),
    });
    const raw = await response.text();
    return { status: response.status, headers: response.headers, raw, body: parsed(raw) };
  };
  return {
    get url() {
      return baseUrl();
    },
    at,
    request,
    api: async (method, path, options) => {
      const answer = await request(method, path, options);
      return { status: answer.status, ...(answer.body as object) };
    },
  };
}
