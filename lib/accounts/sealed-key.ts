// A random 32-byte key kept in the table sealed by the master key, created once on first use (the first
// writer wins when several containers race). Signs tokens, and peppers stored verification-code hashes so
// a copy of the table alone cannot brute-force the six digits.
import { randomBytes } from 'node:crypto';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { ConditionFailedError, type Table } from '#lib/platform/db/table.ts';

type SealedItem = { pk: string; sk: string; sealed: string };

export function sealedKey(
  table: Table,
  masterKey: () => Promise<MasterKey>,
  name: string,
): () => Promise<Buffer> {
  const itemKey = { pk: `settings#${name}`, sk: 'settings' };
  const context = { purpose: name };
  let loaded: Promise<Buffer> | undefined;
  const load = async (): Promise<Buffer> => {
    const key = await masterKey();
    const stored = await table.get<SealedItem>(itemKey);
    if (stored) return key.decrypt(stored.sealed, context);
    const fresh = randomBytes(32);
    try {
      await table.putNew({ ...itemKey, sealed: await key.encrypt(fresh, context) });
      return fresh;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const winner = await table.get<SealedItem>(itemKey);
      if (!winner) throw error;
      return key.decrypt(winner.sealed, context);
    }
  };
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}
