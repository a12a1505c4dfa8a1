// The local server's stand-in for the CDN's standard logs (docs/UPLOADS.md "Bandwidth"): each /i/ answer
// (an original, a rendition, a refusal) is one record in CloudFront's format (lib/files/cdn-log.ts), its
// sc-bytes the body's bytes, and each second's records one gzip object under `cdn/` in the access-log
// bucket, named as CloudFront names them, so the bandwidth worker reads them as in AWS.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CdnLogRecord, formatCdnLog } from '#lib/files/cdn-log.ts';
import { log } from '#lib/platform/log.ts';
import { type AccessLogStore, CDN_LOG_PREFIX } from '#lib/platform/storage/access-logs.ts';

const FLUSH_MS = 1000;

export interface LocalAccessLog {
  record(request: IncomingMessage, response: ServerResponse): void;
  /** Writes what is buffered, and no more. */
  stop(): Promise<void>;
}

export function localAccessLog(store: AccessLogStore): LocalAccessLog {
  let buffered: CdnLogRecord[] = [];
  let writing = Promise.resolve();
  const flush = () => {
    if (buffered.length === 0) return writing;
    const records = buffered;
    buffered = [];
    const hour = new Date().toISOString().slice(0, 13);
    const key = `${CDN_LOG_PREFIX}LOCAL.${hour}.${crypto.randomUUID()}.gz`;
    writing = writing
      .then(() => store.write(key, formatCdnLog(records)))
      .catch((error: unknown) => log.warn('local CDN log not written', { error }));
    return writing;
  };
  const timer = setInterval(flush, FLUSH_MS);
  timer.unref();
  return {
    record(request, response) {
      const url = new URL(request.url ?? '/', 'http://local');
      if (!url.pathname.startsWith('/i/')) return;
      let bytes = 0;
      const count = (chunk: unknown, encoding?: unknown) => {
        if (typeof chunk === 'string') bytes += Buffer.byteLength(chunk, encoding as BufferEncoding);
        else if (chunk instanceof Uint8Array) bytes += chunk.byteLength;
      };
      const { write, end } = response;
      response.write = ((chunk: unknown, ...rest: unknown[]) => {
        count(chunk, rest[0]);
        return (write as (...args: unknown[]) => boolean).call(response, chunk, ...rest);
      }) as typeof response.write;
      response.end = ((chunk?: unknown, ...rest: unknown[]) => {
        if (typeof chunk !== 'function') count(chunk, rest[0]);
        return (end as (...args: unknown[]) => ServerResponse).call(response, chunk, ...rest);
      }) as typeof response.end;
      response.once('finish', () => {
        const now = new Date().toISOString();
        buffered.push({
          date: now.slice(0, 10),
          time: now.slice(11, 19),
          'x-edge-location': 'LOCAL',
          'sc-bytes': String(bytes),
          'c-ip': request.socket.remoteAddress ?? '-',
          'cs-method': request.method ?? 'GET',
          'cs(Host)': request.headers.host ?? '-',
          'cs-uri-stem': url.pathname,
          'sc-status': String(response.statusCode),
          'cs(Referer)': request.headers.referer ?? '-',
          'cs(User-Agent)': request.headers['user-agent'] ?? '-',
          'cs-uri-query': url.search === '' ? '-' : url.search.slice(1),
        });
      });
    },
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
