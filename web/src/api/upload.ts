// Uploads with progress (fetch reports none): small files go straight to POST /api/v1/upload, larger ones
// to storage through a presigned PUT and are then confirmed (docs/UPLOADS.md "Presigned upload").
import { ApiError, api, call, type DataOf, toApiError } from './client.ts';
import { session } from './session.ts';

export type FileRecord = DataOf<'/api/v1/upload/confirm', 'post'>;
/** An upload: the file, its progress as a fraction, and the caller's album to put it in, if any. */
type Upload = (file: File, onProgress: (fraction: number) => void, albumId?: string) => Promise<FileRecord>;

/** upload.max_bytes by default: API Gateway and Lambda cap a request at 6 MB, base64 included. */
export const DIRECT_UPLOAD_LIMIT = 4 * 1024 * 1024;

function send(
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress: (fraction: number) => void,
): Promise<XMLHttpRequest> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(method, url);
    // Content-Length is the browser's to set (from the body; setting it logs "Refused to set unsafe header").
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() !== 'content-length') request.setRequestHeader(name, value);
    }
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => resolve(request);
    request.onerror = () =>
      reject(new ApiError(0, 'The upload was interrupted; check the connection and retry'));
    request.send(body);
  });
}

function envelopeOf(request: XMLHttpRequest): { message?: string; data?: unknown } | undefined {
  try {
    return JSON.parse(request.responseText) as { message?: string; data?: unknown };
  } catch {
    return undefined;
  }
}

const direct: Upload = async (file, onProgress, albumId) => {
  const form = new FormData();
  if (albumId) form.append('album_id', albumId);
  form.append('file', file, file.name);
  const token = session.token();
  const request = await send(
    'POST',
    '/api/v1/upload',
    form,
    token ? { authorization: `Bearer ${token}` } : {},
    onProgress,
  );
  const body = envelopeOf(request);
  if (request.status >= 200 && request.status < 300 && body) return body.data as FileRecord;
  if (request.status === 401 && token) session.expire();
  throw toApiError(request.status, body as never, request.getResponseHeader('retry-after'));
};

const presigned: Upload = async (file, onProgress, albumId) => {
  const ticket = await call(
    api.POST('/api/v1/upload/presign', {
      body: {
        mime_type: file.type || 'application/octet-stream',
        size: file.size,
        filename: file.name,
        ...(albumId ? { album_id: albumId } : {}),
      },
    }),
  );
  const stored = await send(ticket.method, ticket.url, file, ticket.headers, (fraction) =>
    onProgress(fraction * 0.95),
  );
  if (stored.status < 200 || stored.status >= 300) {
    throw new ApiError(stored.status, `Storage refused the upload (HTTP ${stored.status}); retry`);
  }
  const record = await call(api.POST('/api/v1/upload/confirm', { body: { key: ticket.key } }));
  onProgress(1);
  return record;
};

/** Uploads a file, into one of the caller's albums when `albumId` is given (docs/DESIGN.md 16). */
export const uploadFile: Upload = async (file, onProgress, albumId) => {
  if (file.size > DIRECT_UPLOAD_LIMIT) return presigned(file, onProgress, albumId);
  try {
    return await direct(file, onProgress, albumId);
  } catch (error) {
    // A stage configured with a smaller direct limit says 413: the presigned way takes larger files.
    if (error instanceof ApiError && error.status === 413) return presigned(file, onProgress, albumId);
    throw error;
  }
};
