// The CDN's access-log bucket (docs/UPLOADS.md "Bandwidth"): CloudFront writes gzip objects under `cdn/`
// (infra/cdn.ts); the local server writes the same there in s3rver; the bandwidth worker lists and reads them.
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** Where the CDN's standard logs go in the access-log bucket. */
export const CDN_LOG_PREFIX = 'cdn/';

export class AccessLogStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  /** The keys of CDN log objects written since `since` (a listing of the prefix, page by page). */
  async keysSince(since: Date): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: CDN_LOG_PREFIX,
          ...(token !== undefined ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key && object.LastModified && object.LastModified >= since) keys.push(object.Key);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys;
  }

  /** A log object's text (gunzipped). */
  async read(key: string): Promise<string> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return gunzipSync(await object.Body!.transformToByteArray()).toString('utf8');
  }

  /** Writes one log object (gzip), as the CDN delivers them. */
  async write(key: string, text: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: gzipSync(text),
        ContentType: 'application/gzip',
      }),
    );
  }
}
