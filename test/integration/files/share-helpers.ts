// Shared by the share-link integration tests: the shares and files handlers called in process over one
// test's dependencies, an owner's uploads, albums and shares, opening a share, and fetching its images.
import type { Context } from 'aws-lambda';
import { expect } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import type { TestAccount } from '#test/support/accounts.ts';
import type { TestDeps } from '#test/support/deps.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { buildMultipart, makePng } from '#test/support/images.ts';

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}
export interface Share {
  id: string;
  url: string;
  file_id: string | null;
  album_id: string | null;
  name: string | null;
  has_password: boolean;
  expires_at: string | null;
  max_views: number | null;
  views: number;
  created_at: string;
}
export interface OpenedItem {
  url: string;
  thumbnail: string | null;
  original_name: string;
  [field: string]: unknown;
}
export interface Opened {
  share: {
    id: string;
    has_password: boolean;
    expires_at: string | null;
    max_views: number | null;
    views: number;
  };
  album: { name: string; description: string } | null;
  items: OpenedItem[];
}

/** The helpers over one test file's dependencies and clock. */
export function shareHarness(deps: TestDeps, clock: { advance(ms: number): void }) {
  async function call<T = unknown>(group: 'shares' | 'files', input: EventInput) {
    const result = await deps.handlers[group](apiEvent(input), lambdaContext as Context);
    const headers = (result.headers ?? {}) as Record<string, string>;
    const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
    const json = (headers['content-type'] ?? '').includes('json');
    return {
      status: result.statusCode ?? 0,
      headers,
      bytes,
      text: bytes.toString(),
      body: (json ? parseBody(result) : undefined) as Envelope<T>,
    };
  }

  let shade = 0;
  async function upload(owner: TestAccount, fields: Record<string, string> = {}): Promise<UploadRecord> {
    shade += 1;
    // The clock stands still unless moved: newest-first listings need distinct times.
    clock.advance(5);
    const bytes = makePng(3 + (shade % 50), 2 + Math.floor(shade / 50), [shade % 256, 17, (shade * 5) % 256]);
    const { body, contentType } = buildMultipart([
      { name: 'file', filename: `photo-${shade}.png`, contentType: 'image/png', data: bytes },
      ...Object.entries(fields).map(([name, data]) => ({ name, data })),
    ]);
    const answer = await call<UploadRecord>('files', {
      method: 'POST',
      path: '/api/v1/upload',
      body,
      headers: { ...owner.headers, 'content-type': contentType, 'content-length': String(body.length) },
    });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data;
  }

  async function album(owner: TestAccount, name = 'Shared album', description = 'For friends') {
    const answer = await call<{ id: string }>('files', {
      method: 'POST',
      path: '/api/v1/albums',
      headers: owner.headers,
      body: { name, description },
    });
    expect(answer.status).toBe(201);
    return answer.body.data.id;
  }

  async function share(owner: TestAccount, body: Record<string, unknown>) {
    const answer = await call<Share>('shares', {
      method: 'POST',
      path: '/api/v1/shares',
      headers: owner.headers,
      body,
    });
    expect(answer.status, answer.text).toBe(201);
    return answer.body.data;
  }

  const open = (id: string, body: Record<string, unknown> = {}, sourceIp?: string) =>
    call<Opened>('shares', {
      method: 'POST',
      path: `/api/v1/shares/${id}/open`,
      body,
      ...(sourceIp ? { sourceIp } : {}),
    });

  /** GET of an image URL a share gave, through the shares handler as the CDN would send it. */
  const image = (url: string) => {
    const { pathname, search } = new URL(url);
    return call('shares', { path: `${pathname}${search}` });
  };

  return { call, upload, album, share, open, image };
}
