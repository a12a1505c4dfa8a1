// Streams a multipart/form-data upload through busboy: one `file` part, hashed on the fly, and text fields.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { directUploadTooLarge, UploadError } from './errors.ts';
import { sanitizeOriginalName } from './names.ts';

/** The name of the one file part (SPEC 4.2; what PicGo-style clients send). */
export const FILE_FIELD = 'file';

/**
 * Bytes a body may carry beyond the file itself: boundaries, part headers and the text fields. Generous, so
 * an honest request with a file just under the limit is never refused for its envelope.
 */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export const FIELD_LIMITS = {
  /** text fields at most */
  count: 8,
  /** bytes per text field value */
  valueBytes: 512,
  /** parts of any kind at most (fields, the file, ignored file parts) */
  parts: 16,
  /** header lines per part */
  headerPairs: 16,
} as const;

export interface ParseUploadFormInput {
  body: Buffer | Readable;
  /** the request's Content-Type header, boundary included */
  contentType: string;
  /** largest accepted file, in bytes */
  maxBytes: number;
  /** the request's Content-Length, when known, to refuse an oversized body before reading it */
  contentLength?: number;
  /** the name of the file part (default FILE_FIELD; Chevereto's clients send `source`) */
  fileField?: string;
}

export interface ParsedUploadFile {
  bytes: Buffer;
  /** the client's file name, already through sanitizeOriginalName */
  originalName: string;
  /** what the client claimed; informational only, the type is sniffed from the bytes */
  clientMimeType: string;
  /** SHA-256 of bytes, lower-case hex */
  sha256: string;
  size: number;
}

export interface ParsedUploadForm {
  file: ParsedUploadFile;
  /** the text fields (null prototype, so a field named `__proto__` is just a field) */
  fields: Record<string, string>;
}

const MULTIPART_FORM = /^\s*multipart\/form-data\s*(;|$)/i;

function notMultipart(cause?: unknown): UploadError {
  return new UploadError(
    'unsupported_media_type',
    'request: content type must be multipart/form-data with a boundary',
    { cause },
  );
}

function malformed(detail: string, cause?: unknown): UploadError {
  return new UploadError('bad_request', `request: malformed multipart body (${detail})`, { cause });
}

const noop = (): void => {};

// Field names come from the client and end up in error messages: plain ones as they are, others quoted.
function fieldLabel(name: string): string {
  return /^[\w.-]{1,64}$/.test(name) ? name : JSON.stringify(name.slice(0, 64));
}

/**
 * Reads the form. Rejects with UploadError only: 415 not multipart or no boundary; 413 when the declared
 * length, the bytes read or the file part exceed the limits (reading stops at once); 400 for a missing,
 * empty or repeated `file` part, bad text fields, or a malformed or truncated body. Other file parts are
 * drained and ignored. When it rejects on a stream, the stream is left unpiped and paused, not destroyed,
 * so the caller can still answer and then close the connection.
 */
export async function parseUploadForm(input: ParseUploadFormInput): Promise<ParsedUploadForm> {
  const { body, contentType, maxBytes, fileField = FILE_FIELD } = input;
  if (typeof contentType !== 'string' || !MULTIPART_FORM.test(contentType)) throw notMultipart();
  // The whole body may be this large; an ignored file part must not let a client stream without end.
  const bodyLimit = maxBytes + MULTIPART_OVERHEAD_BYTES;
  const declared = Buffer.isBuffer(body) ? body.length : input.contentLength;
  if (declared !== undefined && declared > bodyLimit) throw directUploadTooLarge(maxBytes);

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // Browsers and clients send UTF-8 names raw in filename="…"; busboy's default is latin1.
      defParamCharset: 'utf8',
      limits: {
        // busboy reports 'limit' when a file reaches fileSize, so +1 lets a file of exactly maxBytes through.
        fileSize: maxBytes + 1,
        fieldSize: FIELD_LIMITS.valueBytes + 1,
        fields: FIELD_LIMITS.count,
        parts: FIELD_LIMITS.parts,
        headerPairs: FIELD_LIMITS.headerPairs,
      },
    });
  } catch (error) {
    throw notMultipart(error);
  }

  return new Promise<ParsedUploadForm>((resolve, reject) => {
    const fields = Object.create(null) as Record<string, string>;
    const ignoredFileParts: string[] = [];
    const chunks: Buffer[] = [];
    const hash = createHash('sha256');
    let size = 0;
    let file: Omit<ParsedUploadFile, 'bytes' | 'sha256' | 'size'> | undefined;
    let fileEnded = false;
    let formFinished = false;
    let settled = false;
    let stopInput: () => void = noop;

    const fail = (error: UploadError): void => {
      if (settled) return;
      settled = true;
      stopInput();
      // Not inside busboy's own event (it still touches its state after emitting 'limit'), hence the tick.
      // busboy reports its teardown as errors on itself and open file streams; the listeners stay.
      process.nextTick(() => parser.destroy());
      reject(error);
    };

    const finishIfDone = (): void => {
      if (settled || !formFinished || (file !== undefined && !fileEnded)) return;
      if (file === undefined) {
        const others =
          ignoredFileParts.length > 0 ? ` (file parts seen: ${ignoredFileParts.join(', ')})` : '';
        fail(new UploadError('bad_request', `${fileField}: part is missing${others}`));
        return;
      }
      if (size === 0) {
        fail(new UploadError('bad_request', `${fileField}: is empty`));
        return;
      }
      settled = true;
      // busboy hands out slices of the body; one slice (a body given whole) is used as it is, not copied.
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      resolve({ file: { ...file, bytes, sha256: hash.digest('hex'), size }, fields });
    };

    parser.on('file', (name, stream, info) => {
      stream.on('error', noop);
      if (settled) {
        stream.resume();
        return;
      }
      if (name !== fileField) {
        ignoredFileParts.push(JSON.stringify((name ?? '').slice(0, 64)));
        stream.resume();
        return;
      }
      if (file !== undefined) {
        stream.resume();
        fail(new UploadError('bad_request', `${fileField}: more than one part named ${fileField}`));
        return;
      }
      file = { originalName: sanitizeOriginalName(info.filename), clientMimeType: info.mimeType };
      stream.on('limit', () => fail(directUploadTooLarge(maxBytes)));
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        hash.update(chunk);
        size += chunk.length;
      });
      stream.on('end', () => {
        fileEnded = true;
        finishIfDone();
      });
    });

    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (info.valueTruncated) {
        fail(
          new UploadError('bad_request', `${fieldLabel(name)}: longer than ${FIELD_LIMITS.valueBytes} bytes`),
        );
      } else if (Object.hasOwn(fields, name)) {
        fail(new UploadError('bad_request', `${fieldLabel(name)}: given more than once`));
      } else {
        fields[name] = value;
      }
    });
    parser.on('fieldsLimit', () =>
      fail(new UploadError('bad_request', `request: more than ${FIELD_LIMITS.count} text fields`)),
    );
    parser.on('partsLimit', () =>
      fail(new UploadError('bad_request', `request: more than ${FIELD_LIMITS.parts} parts`)),
    );
    parser.on('error', (error: unknown) => {
      fail(malformed(error instanceof Error ? error.message : 'unreadable', error));
    });
    parser.on('finish', () => {
      formFinished = true;
      finishIfDone();
    });

    if (Buffer.isBuffer(body)) {
      parser.end(body);
      return;
    }

    if (body.readableEnded || body.destroyed) {
      // No 'end' would ever come; better a clear 400 than a request that hangs.
      fail(malformed('the request body was already read'));
      return;
    }
    let received = 0;
    let ended = false;
    const onData = (chunk: Buffer | string): void => {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > bodyLimit) {
        fail(directUploadTooLarge(maxBytes));
        return;
      }
      if (!parser.write(bytes)) body.pause();
    };
    const onEnd = (): void => {
      ended = true;
      if (!settled) parser.end();
    };
    const onError = (error: unknown): void => fail(malformed('the request body could not be read', error));
    const onClose = (): void => {
      if (!ended) fail(malformed('the request body ended early'));
    };
    stopInput = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      body.pause();
    };
    parser.on('drain', () => {
      if (!settled) body.resume();
    });
    body.on('error', onError);
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('close', onClose);
  });
}
