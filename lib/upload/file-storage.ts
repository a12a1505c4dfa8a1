// This container's file storage (the configured bucket), built once on first use. Shared by the upload
// services and the `files` group, which serves stored files and needs nothing else of the upload pipeline.
import { s3Client } from '../aws/s3.ts';
import { config } from '../config/index.ts';
import { FileStorage } from './storage.ts';

let storage: FileStorage | undefined;

export function fileStorage(): FileStorage {
  storage ??= new FileStorage(s3Client(), config.bucket_name);
  return storage;
}
