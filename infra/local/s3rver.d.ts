// Types for the parts of s3rver (which ships none) that this project uses.
declare module 's3rver' {
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory?: string;
    silent?: boolean;
    resetOnClose?: boolean;
    vhostBuckets?: boolean;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: Array<{ name: string; configs?: Array<string | Buffer> }>;
  }
  /** The filesystem store behind the server (infra/local/s3-local.ts replaces its writes). */
  export interface S3rverStore {
    getBucketPath(bucket: string): string;
    getResourcePath(bucket: string, key: string | undefined, resource: string): string;
    getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
    putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
    putObject(object: {
      bucket: string;
      key: string;
      metadata: Record<string, unknown>;
      content: Buffer | NodeJS.ReadableStream;
    }): Promise<{ size: number; md5: string }>;
    deleteObject(bucket: string, key: string): Promise<void>;
    listObjects(bucket: string, options: Record<string, unknown>): Promise<unknown>;
    copyObject(
      srcBucket: string,
      srcKey: string,
      destBucket: string,
      destKey: string,
      replacementMetadata?: Record<string, unknown>,
    ): Promise<Record<string, unknown>>;
  }
  export default class S3rver {
    constructor(options?: S3rverOptions);
    store: S3rverStore;
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    reset(): void;
  }
}
