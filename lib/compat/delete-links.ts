// Chevereto's `delete_url`: a link that deletes one file for whoever holds it, as ShareX keeps it
// (docs/COMPAT.md). `…/compat/chevereto/delete/<id>/<sig>`, sig an HMAC-SHA256 of the id under a key sealed
// by the master key; it works until the file is gone. Its page asks before deleting (a link preview or a
// prefetch must not delete), the confirmation posts to the same address.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';

export interface DeleteLinksInput {
  /** A key sealed by the master key (lib/accounts/sealed-key.ts `compat-delete-link`). */
  key: () => Promise<Buffer>;
  baseUrl: string;
}

export interface DeleteLinks {
  url(id: string): Promise<string>;
  /** 404 (as for a file that does not exist) when the signature is not this id's. */
  check(id: string, sig: string): Promise<void>;
}

export function deleteLinks(input: DeleteLinksInput): DeleteLinks {
  const sign = async (id: string) =>
    createHmac('sha256', await input.key())
      .update(`chevereto-delete\n${id}`)
      .digest();
  const base = input.baseUrl.replace(/\/+$/, '');
  return {
    url: async (id) =>
      `${base}/compat/chevereto/delete/${encodeURIComponent(id)}/${(await sign(id)).toString('base64url')}`,
    check: async (id, sig) => {
      const expected = await sign(id);
      const given = Buffer.from(sig, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw errors.notFound('file: not found');
    },
  };
}
