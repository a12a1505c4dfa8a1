// The group's file storage (need `bucket`).
import { s3Client } from '#lib/platform/aws/s3.ts';
import { FileStorage } from '#lib/platform/storage/s3.ts';
import { type GroupResources, once } from './resources.ts';

export function storageOf(resources: GroupResources): FileStorage {
  const { settings } = resources;
  return once(resources, 'bucket', () => new FileStorage(s3Client(settings.aws), settings.bucket_name));
}
