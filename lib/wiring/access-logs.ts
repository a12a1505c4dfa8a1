// The CDN's access logs (need `accessLogs`).
import { s3Client } from '#lib/platform/aws/s3.ts';
import { AccessLogStore } from '#lib/platform/storage/access-logs.ts';
import { type GroupResources, once } from './resources.ts';

export function accessLogsOf(resources: GroupResources): AccessLogStore {
  const { settings } = resources;
  return once(
    resources,
    'accessLogs',
    () => new AccessLogStore(s3Client(settings.aws), settings.access_log_bucket_name),
  );
}
