// One function's view of AWS: every SDK call is checked against its IAM policy, then served or refused.
import { randomUUID } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { cloudFrontCalls } from './cloudfront-calls.ts';
import { cloudFrontError, type FakeCloudFront, type FakeCloudFrontAnswer } from './fake-cloudfront.ts';
import type { FakeEventBridge } from './fake-eventbridge.ts';
import type { FakeKms } from './fake-kms.ts';
import { type FakeKeyValueStore, keyValueStoreRequest } from './fake-kvs.ts';
import type { FakeSecretsManager } from './fake-secrets-manager.ts';
import { assertSupported, describeDenial, isAllowed, type PolicyStatement } from './iam.ts';
import { type AwsRequest, type IamCalls, iamCallsOf, splitUrl } from './iam-calls.ts';

export interface RecordedCall {
  service: string;
  operation: string;
  action: string;
  resource: string;
  allowed: boolean;
}

export interface Denial {
  functionName: string;
  action: string;
  resource: string;
  operation: string;
}

export interface AwsGatewayOptions {
  functionName: string;
  /** the function's identity policy: resolved statements of its role's policies */
  policy: PolicyStatement[];
  region: string;
  account: string;
  /** base URLs of the stand-ins; without `ses`, allowed mail calls answer 501 */
  upstream: { dynamodb: string; s3: string; ses?: string };
  kms: FakeKms;
  events: FakeEventBridge;
  /** without it, allowed CloudFront calls answer 501 */
  cloudfront?: FakeCloudFront;
  /** without it, allowed KeyValueStore calls answer 501 */
  keyValueStore?: FakeKeyValueStore;
  /** without it, allowed Secrets Manager calls answer 501 */
  secrets?: FakeSecretsManager;
}

export interface AwsGateway {
  /** give this to every AWS SDK client of the function */
  endpoint: string;
  calls: RecordedCall[];
  denials: Denial[];
  /** failures of the gateway itself (not of the calls): a test should expect none */
  errors: string[];
  close(): Promise<void>;
}

/** How a service words its errors, so the SDK parses ours as it would the real one. */
type ErrorStyle = 'json1.0' | 'json1.1' | 's3' | 'query' | 'rest-json' | 'rest-xml';

const MAX_BODY_BYTES = 128 * 1024 * 1024;
// Connection-level headers are the proxy's own business, not the request's (RFC 9110 7.6.1); `expect` is
// answered here already, the body being read in full before forwarding.
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

function styleOf(found: IamCalls, request: AwsRequest): ErrorStyle {
  switch (found.service) {
    case 'dynamodb':
      return 'json1.0';
    case 'kms':
    case 'events':
    case 'secretsmanager':
      return 'json1.1';
    case 'ses':
      return splitUrl(request.url).pathname.startsWith('/v2/') ? 'rest-json' : 'query';
    case 's3':
      return 's3';
    case 'cloudfront':
      return 'rest-xml';
    case 'cloudfront-keyvaluestore':
      return 'rest-json';
    default:
      // Unsigned or unknown: a JSON protocol if the request names a target, else S3's XML (browser requests).
      return request.headers['x-amz-target'] ? 'json1.1' : 's3';
  }
}

function xmlEscape(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}

function sendError(
  res: ServerResponse,
  style: ErrorStyle,
  status: number,
  code: string,
  message: string,
): void {
  if (style === 'rest-xml') {
    sendXml(res, cloudFrontError(status, code, message));
    return;
  }
  const requestId = randomUUID();
  let contentType: string;
  let body: string;
  if (style === 's3') {
    contentType = 'application/xml';
    body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message><RequestId>${requestId}</RequestId></Error>`;
  } else if (style === 'query') {
    contentType = 'text/xml';
    body = `<ErrorResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
  } else {
    contentType =
      style === 'rest-json' ? 'application/json' : `application/x-amz-${style.replace('json', 'json-')}`;
    body = JSON.stringify(style === 'rest-json' ? { message } : { __type: code, message });
  }
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'x-amzn-errortype': code,
    'x-amzn-requestid': requestId,
    'x-amz-request-id': requestId,
  });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Answers with what the in-process fake said, in the JSON 1.1 shape the SDK expects. */
function sendFake(res: ServerResponse, answer: { status: number; body: unknown }): void {
  const body = JSON.stringify(answer.body);
  const type = (answer.body as { __type?: unknown } | null)?.__type;
  res.writeHead(answer.status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': randomUUID(),
    ...(answer.status >= 400 && typeof type === 'string' ? { 'x-amzn-errortype': type } : {}),
  });
  res.end(body);
}

/** Answers with what the in-process REST-XML fake (CloudFront) said. */
function sendXml(res: ServerResponse, answer: FakeCloudFrontAnswer): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'content-length': Buffer.byteLength(answer.body),
    'x-amz-request-id': randomUUID(),
  });
  res.end(answer.body);
}

/** A browser's CORS preflight carries no signature; S3 answers it from the bucket's CORS rules, not IAM. */
function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && !!req.headers.origin && !!req.headers['access-control-request-method'];
}

export async function startAwsGateway(options: AwsGatewayOptions): Promise<AwsGateway> {
  // A policy this evaluator cannot model fails here, once, instead of on every request.
  assertSupported(options.policy);
  const where = { region: options.region, account: options.account };
  const agent = new Agent({ keepAlive: true });
  const calls: RecordedCall[] = [];
  const denials: Denial[] = [];
  const errors: string[] = [];

  /** A plain proxy: same method, path, headers (host excepted) and body; the answer streams back. */
  function forward(
    upstream: string,
    request: AwsRequest,
    res: ServerResponse,
    style: ErrorStyle,
  ): Promise<void> {
    const target = new URL(upstream);
    const headers = { ...request.headers };
    for (const name of [...HOP_BY_HOP, 'expect']) delete headers[name];
    headers.host = target.host;
    if (request.body.length > 0 || request.headers['content-length'] !== undefined) {
      headers['content-length'] = String(request.body.length);
    }
    return new Promise((resolve) => {
      const outgoing = httpRequest(
        {
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          headers,
          agent,
        },
        (answer) => {
          const answerHeaders = { ...answer.headers };
          for (const name of HOP_BY_HOP) delete answerHeaders[name];
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answerHeaders);
          pipeline(answer, res).then(resolve, (error: unknown) => {
            errors.push(`streaming the answer of ${upstream}${request.url}: ${String(error)}`);
            res.destroy();
            resolve();
          });
        },
      );
      outgoing.on('error', (error) => {
        errors.push(`forwarding ${request.method} ${request.url} to ${upstream}: ${error.message}`);
        if (res.headersSent) res.destroy();
        else sendError(res, style, 502, 'BadGateway', `${upstream} did not answer: ${error.message}`);
        resolve();
      });
      outgoing.end(request.body);
    });
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const request: AwsRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body,
    };
    if (isPreflight(req)) {
      const path = splitUrl(request.url).pathname;
      calls.push({ service: 's3', operation: 'Preflight', action: '(none)', resource: path, allowed: true });
      return forward(options.upstream.s3, request, res, 's3');
    }

    const found = iamCallsOf(request, where);
    let refusal: string | undefined;
    for (const call of found.calls) {
      const allowed =
        !call.unrecognised && isAllowed(options.policy, call.action, call.resource, call.context);
      const { action, resource } = call;
      calls.push({ service: found.service, operation: found.operation, action, resource, allowed });
      if (allowed) continue;
      denials.push({
        functionName: options.functionName,
        action: call.action,
        resource: call.resource,
        operation: found.operation,
      });
      refusal ??= describeDenial(options.functionName, call.action, call.resource);
    }
    const style = styleOf(found, request);
    if (refusal) {
      const status = style === 'json1.0' || style === 'json1.1' ? 400 : 403;
      const code =
        style === 'json1.0' || style === 'json1.1' || style === 'rest-json'
          ? 'AccessDeniedException'
          : 'AccessDenied';
      return sendError(res, style, status, code, refusal);
    }

    switch (found.service) {
      case 'dynamodb':
        return forward(options.upstream.dynamodb, request, res, style);
      case 's3':
        return forward(options.upstream.s3, request, res, style);
      case 'ses':
        if (options.upstream.ses) return forward(options.upstream.ses, request, res, style);
        return sendError(res, style, 501, 'NotImplemented', 'This gateway has no SES stand-in');
      case 'kms':
        return sendFake(res, options.kms.handle(found.operation, JSON.parse(body.toString('utf8') || '{}')));
      case 'events':
        return sendFake(
          res,
          options.events.handle(found.operation, JSON.parse(body.toString('utf8') || '{}')),
        );
      case 'secretsmanager':
        if (!options.secrets)
          return sendError(res, style, 501, 'NotImplemented', 'This gateway has no Secrets Manager fake');
        return sendFake(
          res,
          options.secrets.handle(found.operation, JSON.parse(body.toString('utf8') || '{}')),
        );
      case 'cloudfront': {
        if (!options.cloudfront) {
          return sendError(res, style, 501, 'NotImplemented', 'This gateway has no CloudFront fake');
        }
        // iamCallsOf recognised the path, so it names a distribution.
        const target = cloudFrontCalls(request.method, splitUrl(request.url).pathname, where)!;
        return sendXml(res, options.cloudfront.handle(found.operation, target.distributionId, body));
      }
      case 'cloudfront-keyvaluestore': {
        if (!options.keyValueStore) {
          return sendError(res, style, 501, 'NotImplemented', 'This gateway has no KeyValueStore fake');
        }
        // iamCallsOf recognised the path, so it names an operation and a store.
        const target = keyValueStoreRequest(request.method, splitUrl(request.url).pathname)!;
        const ifMatch = request.headers['if-match'];
        const answer = options.keyValueStore.handle(
          target.operation,
          target.kvsArn,
          Array.isArray(ifMatch) ? ifMatch[0] : ifMatch,
          body,
        );
        res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
        res.end(answer.body);
        return;
      }
      default:
        // iamCallsOf marks every other service unrecognised, so this is never reached with an allowed call.
        throw new Error(`no upstream for service ${found.service}`);
    }
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      errors.push(`${req.method} ${req.url}: ${error instanceof Error ? error.message : String(error)}`);
      if (res.headersSent) res.destroy();
      else sendError(res, 'json1.1', 500, 'InternalFailure', `AWS gateway failed: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    denials,
    errors,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // The SDK keeps its connections alive; without this, close() would wait for them to time out.
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
