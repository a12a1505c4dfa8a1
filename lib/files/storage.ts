// Only until infra/local/app.ts imports the S3 adapter from lib/platform/storage/s3.ts, its home now.
export { FileStorage } from '#lib/platform/storage/s3.ts';
