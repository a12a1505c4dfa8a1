// Test harness of the AWS gateway tests: a recording upstream stand-in, a gateway per test, SDK clients on it.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { startAwsGateway } from '#test/support/deployed/aws-gateway.ts';
import { createFakeCloudFront } from '#test/support/deployed/fake-cloudfront.ts';
import { createFakeEventBridge } from '#test/support/deployed/fake-eventbridge.ts';
import { createFakeKms, newKeyArn } from '#test/support/deployed/fake-kms.ts';
import type { PolicyStatement } from '#test/support/deployed/iam.ts';

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';
export const KEY = newKeyArn(REGION, ACCOUNT);
export const TABLE = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/app`;
export const DISTRIBUTION = 'E1HARNESS';
export const ORDERS_BUS = `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/orders`;
const POLICY: PolicyStatement[] = [
  { Effect: 'Allow', Action: ['kms:GenerateDataKey', 'kms:Decrypt'], Resource: KEY },
  { Effect: 'Allow', Action: 'events:PutEvents', Resource: ORDERS_BUS },
  { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Query'], Resource: TABLE },
  { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: 'arn:aws:s3:::files/*' },
  {
    Effect: 'Allow',
    Action: 'ses:SendEmail',
    Resource: `arn:aws:ses:${REGION}:${ACCOUNT}:identity/example.com`,
  },
];
export const CLIENT = {
  region: REGION,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  maxAttempts: 1,
};

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A stand-in for DynamoDB Local, s3rver or the SES stand-in: records what arrives, answers as told. */
export async function startUpstream(answer: (seen: Seen) => Answer) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    };
    seen.push(request);
    const reply = answer(request);
    if (reply === 'hang') return;
    res.writeHead(reply.status, reply.headers ?? {});
    res.end(reply.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { endpoint, seen };
}

export async function setup(
  answer: (seen: Seen) => Answer = () => ({ status: 500 }),
  policy: PolicyStatement[] = POLICY,
) {
  const upstream = await startUpstream(answer);
  const kms = createFakeKms({ keyArns: [KEY] });
  const events = createFakeEventBridge();
  const cloudfront = createFakeCloudFront({ distributionIds: [DISTRIBUTION] });
  const gateway = await startAwsGateway({
    functionName: 'payments',
    policy,
    region: REGION,
    account: ACCOUNT,
    upstream: { dynamodb: upstream.endpoint, s3: upstream.endpoint, ses: upstream.endpoint },
    kms,
    events,
    cloudfront,
  });
  onTestFinished(() => gateway.close());
  return { gateway, upstream, kms, events, cloudfront };
}

/** An SDK client on the gateway, destroyed (with its kept-alive sockets) after the test. */
export function client<T extends { destroy(): void }>(make: new (config: never) => T, config: object): T {
  const made = new make(config as never);
  onTestFinished(() => made.destroy());
  return made;
}
