// What the peers' clients read (docs/COMPAT.md): an upload record and the bytes sent, said in Lsky Pro's v1
// and v2 answers and in Chevereto's (ImgBB-style) one; and any error in each peer's error shape, with the
// status and message the house would answer (a hidden message stays hidden, a 5xx is logged).
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { UploadRecord } from '#lib/files/record.ts';
import { errorResult } from '#lib/http/errors.ts';
import type { HttpResult } from '#lib/http/types.ts';

export type Peer = 'lsky' | 'lsky-v2' | 'chevereto';

/** A JSON answer not wearing the house envelope. */
export function peerJson(status: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    kind: 'raw',
    status,
    body: JSON.stringify(body),
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
  };
}

/** Any error thrown while serving a peer's route, in that peer's error shape. */
export function peerError(peer: Peer, error: unknown): HttpResult {
  const house = errorResult(error);
  const { status } = house;
  const message = house.kind === 'json' ? house.body.message : (STATUS_CODES[status] ?? 'Error');
  const body =
    peer === 'chevereto'
      ? { status_code: status, error: { message, code: status }, status_txt: STATUS_CODES[status] ?? 'Error' }
      : { status: peer === 'lsky' ? false : 'error', message, data: {} };
  return peerJson(status, body, house.headers ?? {});
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const escapeMarkdown = (text: string) => text.replace(/[[\]\\]/g, '\\$&');
const extensionOf = (record: UploadRecord) => record.filename.split('.').pop() ?? '';
/** Lsky Pro counts sizes in KB, two decimals. */
const kilobytes = (bytes: number) => Math.round((bytes / 1024) * 100) / 100;
const digest = (algorithm: 'md5' | 'sha1', bytes: Buffer) =>
  createHash(algorithm).update(bytes).digest('hex');

/** Lsky Pro 2's `POST /api/v1/upload` data (app/Http/Controllers/Api/V1/ImageController.php). */
export function lskyV1Data(record: UploadRecord, sent: Buffer) {
  const { url } = record;
  const alt = escapeMarkdown(record.original_name);
  return {
    key: record.id,
    name: record.filename,
    pathname: record.key,
    origin_name: record.original_name,
    size: kilobytes(record.size),
    mimetype: record.mime_type,
    extension: extensionOf(record),
    md5: digest('md5', sent),
    sha1: digest('sha1', sent),
    links: {
      url,
      html: `<img src="${url}" alt="${escapeHtml(record.original_name)}" title="${escapeHtml(record.original_name)}" />`,
      bbcode: `[img]${url}[/img]`,
      markdown: `![${alt}](${url})`,
      markdown_with_link: `[![${alt}](${url})](${url})`,
      thumbnail_url: record.thumbnail ?? url,
    },
  };
}

/** Lsky Pro+'s `POST /api/v2/upload` data: the photo, its `public_url` what clients copy. */
export function lskyV2Data(record: UploadRecord, sent: Buffer) {
  return {
    id: record.id,
    name: record.original_name,
    filename: record.filename,
    pathname: record.key,
    mimetype: record.mime_type,
    extension: extensionOf(record),
    size: kilobytes(record.size),
    width: record.width,
    height: record.height,
    md5: digest('md5', sent),
    sha1: digest('sha1', sent),
    public_url: record.url,
    thumbnail_url: record.thumbnail ?? record.url,
    is_public: record.permission === 'public',
    created_at: record.created_at,
  };
}

/** Chevereto's `POST /api/1/upload` answer (ImgBB's shape); `deleteUrl` a signed link (delete-links.ts). */
export function cheveretoAnswer(record: UploadRecord, deleteUrl: string) {
  const extension = extensionOf(record);
  const thumb = record.thumbnail ?? record.url;
  const date = record.created_at.slice(0, 19).replace('T', ' ');
  return {
    status_code: 200,
    success: { message: 'image uploaded', code: 200 },
    image: {
      name: record.filename.slice(0, record.filename.length - extension.length - 1),
      extension,
      filename: record.filename,
      original_filename: record.original_name,
      mime: record.mime_type,
      size: record.size,
      width: record.width,
      height: record.height,
      date,
      url: record.url,
      display_url: record.url,
      url_viewer: record.url,
      thumb: { url: thumb },
      medium: { url: thumb },
      delete_url: deleteUrl,
    },
    status_txt: 'OK',
  };
}
