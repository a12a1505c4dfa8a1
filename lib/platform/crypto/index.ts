// Opens the master key where the settings say it lives: KMS in AWS, the local key file otherwise.
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { MasterKey } from './master-key.ts';

export type { MasterKey } from './master-key.ts';

/** What opening the master key takes: where it lives, and how to reach KMS. */
export type MasterKeySettings = Pick<AppConfig, 'master_key' | 'data_dir' | 'aws'>;

export async function openMasterKey(settings: MasterKeySettings): Promise<MasterKey> {
  if (settings.master_key.provider === 'kms') {
    if (!settings.master_key.kms_key_id)
      throw new Error('master_key.kms_key_id is required with provider kms');
    // KMS code loads only in groups that seal or open secrets.
    const [{ createKmsMasterKey }, { kmsClient }] = await Promise.all([
      import('./kms-key.ts'),
      import('#lib/platform/aws/kms.ts'),
    ]);
    return createKmsMasterKey(kmsClient(settings.aws), settings.master_key.kms_key_id);
  }
  const { createLocalMasterKey, loadOrCreateLocalKeyBytes } = await import('./local-key.ts');
  return createLocalMasterKey(loadOrCreateLocalKeyBytes(settings.data_dir));
}

/**
 * The master key once per container. A failure (KMS unreachable, a key file that cannot be written) is
 * not remembered: the next request tries again instead of failing for the container's whole life.
 */
export function cachedMasterKey(open: () => Promise<MasterKey>): () => Promise<MasterKey> {
  let opening: Promise<MasterKey> | undefined;
  return () => {
    opening ??= open().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
}
