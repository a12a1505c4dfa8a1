// The master key of this process, chosen by configuration: KMS in AWS, the local key file otherwise.
import { config } from '../config/index.ts';
import type { MasterKey } from './master-key.ts';

export type { EncryptionContext, MasterKey } from './master-key.ts';
export { DecryptionError } from './master-key.ts';

let instance: Promise<MasterKey> | undefined;

export function masterKey(): Promise<MasterKey> {
  instance ??= (async () => {
    if (config.master_key.provider === 'kms') {
      if (!config.master_key.kms_key_id)
        throw new Error('master_key.kms_key_id is required with provider kms');
      const [{ createKmsMasterKey }, { kmsClient }] = await Promise.all([
        import('./kms-key.ts'),
        import('../aws/kms.ts'),
      ]);
      return createKmsMasterKey(kmsClient(), config.master_key.kms_key_id);
    }
    const { createLocalMasterKey, loadOrCreateLocalKeyBytes } = await import('./local-key.ts');
    return createLocalMasterKey(loadOrCreateLocalKeyBytes(config.data_dir));
  })();
  return instance;
}
