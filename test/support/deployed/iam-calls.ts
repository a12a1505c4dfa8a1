// What one AWS SDK request amounts to in IAM terms: its service, operation, and (action, resource) pairs.
import { TABLE } from '#lib/platform/db/keys.ts';
import { cloudFrontCalls } from './cloudfront-calls.ts';
import { keyArnOfCiphertext } from './fake-kms.ts';
import { keyValueStoreRequest } from './fake-kvs.ts';
import type { CallContext } from './iam.ts';
import { s3Calls } from './s3-calls.ts';

export interface AwsRequest {
  method: string;
  /** path and query */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface IamCall {
  action: string;
  resource: string;
  /** What a condition may test (the partition keys of the items a DynamoDB call touches). */
  context?: CallContext;
  /** the request was not understood (or not signed): deny it whatever the policy says, so it shows */
  unrecognised?: true;
}

export interface IamCalls {
  /** the service of the SigV4 credential scope (`ses` for `email`), or `unsigned` */
  service: string;
  operation: string;
  calls: IamCall[];
}

interface Where {
  region: string;
  account: string;
}

type Json = Record<string, unknown>;

function headerOf(request: AwsRequest, name: string): string | undefined {
  for (const [key, value] of Object.entries(request.headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(',') : value;
  }
  return undefined;
}

/**
 * `Credential=AKID/date/region/service/aws4_request` of the Authorization header or of a presigned URL; a
 * SigV4A signature's scope has no region (`AKID/date/service/aws4_request`).
 */
export function signingService(request: AwsRequest, query: URLSearchParams): string | undefined {
  const authorization = headerOf(request, 'authorization') ?? '';
  if (authorization.startsWith('AWS4-ECDSA-P256-SHA256 ')) {
    const scope = /Credential=([^,\s]+)/.exec(authorization)?.[1]?.split('/');
    return scope?.length === 4 && scope[3] === 'aws4_request' ? scope[2] : undefined;
  }
  const credential = authorization.startsWith('AWS4-HMAC-SHA256 ')
    ? /Credential=([^,\s]+)/.exec(authorization)?.[1]
    : query.get('X-Amz-Algorithm') === 'AWS4-HMAC-SHA256'
      ? (query.get('X-Amz-Credential') ?? undefined)
      : undefined;
  const scope = credential?.split('/');
  if (scope?.length !== 5 || scope[4] !== 'aws4_request') return undefined;
  return scope[3] === 'email' ? 'ses' : scope[3];
}

function jsonOf(body: Buffer): Json | undefined {
  try {
    const value: unknown = JSON.parse(body.length === 0 ? '{}' : body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const records = (value: unknown): Json[] =>
  Array.isArray(value) ? value.filter((item): item is Json => typeof item === 'object' && item !== null) : [];

const TABLE_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'DescribeTable',
  'CreateTable',
  'DeleteTable',
  'UpdateTable',
  'DescribeTimeToLive',
  'UpdateTimeToLive',
]);
/** TransactWriteItems is authorised item by item, each by the action of its single-item counterpart. */
const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Get: 'dynamodb:GetItem',
};

/**
 * `dynamodb:LeadingKeys` of one item request (its Key or Item), or of a Query of the table (the partition
 * key its key condition names, `pk = :v` or `#n = :v`); absent when it names none.
 */
function leadingKeysOf(request: Json): CallContext | undefined {
  const item = (request.Key ?? request.Item) as Record<string, { S?: string }> | undefined;
  const key = item?.[TABLE.partitionKey]?.S ?? queriedPartition(request);
  return key === undefined ? undefined : { 'dynamodb:LeadingKeys': [key] };
}

function queriedPartition(request: Json): string | undefined {
  const condition = text(request.KeyConditionExpression);
  if (!condition || request.IndexName !== undefined) return undefined;
  const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (request.ExpressionAttributeValues ?? {}) as Record<string, { S?: string }>;
  for (const [, name, placeholder] of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    if ((names[name!] ?? name) === TABLE.partitionKey) return values[placeholder!]?.S;
  }
  return undefined;
}

function dynamodbCalls(operation: string, body: Json, where: Where): IamCall[] | undefined {
  // TableName may also be a table ARN.
  const table = (name: string) =>
    name.startsWith('arn:') ? name : `arn:aws:dynamodb:${where.region}:${where.account}:table/${name}`;
  if (TABLE_OPERATIONS.has(operation)) {
    const name = text(body.TableName);
    if (!name) return undefined;
    const index = (operation === 'Query' || operation === 'Scan') && text(body.IndexName);
    const context = leadingKeysOf(body);
    return [
      {
        action: `dynamodb:${operation}`,
        resource: index ? `${table(name)}/index/${index}` : table(name),
        ...(context ? { context } : {}),
      },
    ];
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    const items = body.RequestItems;
    if (typeof items !== 'object' || items === null) return undefined;
    return Object.keys(items).map((name) => ({ action: `dynamodb:${operation}`, resource: table(name) }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const kinds = operation === 'TransactGetItems' ? ['Get'] : ['Put', 'Update', 'Delete', 'ConditionCheck'];
    const calls: IamCall[] = [];
    for (const item of records(body.TransactItems)) {
      const kind = kinds.find((candidate) => typeof item[candidate] === 'object');
      const name = kind && text((item[kind] as Json).TableName);
      if (!kind || !name) return undefined;
      const context = leadingKeysOf(item[kind] as Json);
      calls.push({ action: TRANSACT_ACTIONS[kind]!, resource: table(name), ...(context ? { context } : {}) });
    }
    return calls.length > 0 ? calls : undefined;
  }
  if (operation === 'ListTables') return [{ action: 'dynamodb:ListTables', resource: '*' }];
  return undefined;
}

const KEY_OPERATIONS = new Set([
  'GenerateDataKey',
  'GenerateDataKeyWithoutPlaintext',
  'Encrypt',
  'Decrypt',
  'DescribeKey',
]);

function kmsCalls(operation: string, body: Json, where: Where): IamCall[] | undefined {
  if (!KEY_OPERATIONS.has(operation)) return undefined;
  const keyId = text(body.KeyId);
  // Aliases are not resolved (nothing here uses them): the alias ARN will match no key grant and show.
  const arnOf = (id: string) =>
    id.startsWith('arn:')
      ? id
      : `arn:aws:kms:${where.region}:${where.account}:${id.startsWith('alias/') ? id : `key/${id}`}`;
  if (keyId) return [{ action: `kms:${operation}`, resource: arnOf(keyId) }];
  if (operation !== 'Decrypt') return undefined;
  const named = keyArnOfCiphertext(text(body.CiphertextBlob) ?? '');
  // A blob that names no key cannot be authorised against one; KMS (and the fake) then answer
  // InvalidCiphertextException, which is what the caller should see, not AccessDenied.
  return named ? [{ action: 'kms:Decrypt', resource: named }] : [];
}

/** GetSecretValue (and DescribeSecret) on the secret named by ARN, or by name in this account and region. */
function secretsManagerCalls(operation: string, body: Json, where: Where): IamCall[] | undefined {
  if (operation !== 'GetSecretValue' && operation !== 'DescribeSecret') return undefined;
  const id = text(body.SecretId);
  if (!id) return undefined;
  // A name matches the secret's ARN with its random six-character suffix, as IAM sees it.
  const resource = id.startsWith('arn:')
    ? id
    : `arn:aws:secretsmanager:${where.region}:${where.account}:secret:${id}-??????`;
  return [{ action: `secretsmanager:${operation}`, resource }];
}

function eventsCalls(operation: string, body: Json, where: Where): IamCall[] | undefined {
  if (operation !== 'PutEvents') return undefined;
  // No entries: nothing to authorise; the fake answers ValidationException as EventBridge does.
  return records(body.Entries).map((entry) => {
    const bus = text(entry.EventBusName) ?? 'default';
    const resource = bus.startsWith('arn:')
      ? bus
      : `arn:aws:events:${where.region}:${where.account}:event-bus/${bus}`;
    return { action: 'events:PutEvents', resource };
  });
}

/** `"Name" <user@Example.com>` -> `example.com` */
function domainOf(address: string | undefined): string | undefined {
  const bare = address && (/<([^>]*)>/.exec(address)?.[1] ?? address).trim();
  const at = bare ? bare.lastIndexOf('@') : -1;
  return bare && at > 0 && at < bare.length - 1 ? bare.slice(at + 1).toLowerCase() : undefined;
}

function rawFrom(base64: string | undefined): string | undefined {
  if (!base64) return undefined;
  const head =
    Buffer.from(base64, 'base64')
      .toString('utf8')
      .split(/\r?\n\r?\n/)[0] ?? '';
  return /^From:[ \t]*(.+)$/im.exec(head)?.[1];
}

/**
 * An approximation of SES authorisation: the identity ARN named by the call (SourceArn/FromArn), else the
 * domain identity of the sender. Real SES uses whichever verified identity (address or domain) applies.
 */
function sesCall(action: string, identityArn: string | undefined, from: string | undefined, where: Where) {
  const domain = domainOf(from);
  const resource =
    identityArn ?? (domain && `arn:aws:ses:${where.region}:${where.account}:identity/${domain}`);
  return resource ? [{ action, resource }] : undefined;
}

function unknown(service: string, method: string, pathname: string, operation = 'Unknown'): IamCalls {
  const action = `${service}:Unknown(${method} ${pathname})`;
  return { service, operation, calls: [{ action, resource: '*', unrecognised: true }] };
}

/**
 * Path and query of a request target, the path as sent: `new URL` would resolve `.`/`..` segments and read
 * `//x` as a host, while S3 keys may hold all of these and the upstream gets the path unchanged.
 */
export function splitUrl(url: string): { pathname: string; query: URLSearchParams } {
  const question = url.indexOf('?');
  return question < 0
    ? { pathname: url, query: new URLSearchParams() }
    : { pathname: url.slice(0, question), query: new URLSearchParams(url.slice(question + 1)) };
}

/** The IAM calls of one request, each (action, resource) pair once. */
export function iamCallsOf(request: AwsRequest, where: Where): IamCalls {
  const found = classify(request, where);
  const seen = new Set<string>();
  const calls = found.calls.filter((call) => {
    const id = `${call.action} ${call.resource} ${JSON.stringify(call.context ?? {})}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return { ...found, calls };
}

function classify(request: AwsRequest, where: Where): IamCalls {
  const { pathname, query } = splitUrl(request.url);
  const method = request.method.toUpperCase();
  const service = signingService(request, query);
  if (!service) {
    return {
      service: 'unsigned',
      operation: 'Unsigned',
      calls: [{ action: 'unsigned request', resource: `${method} ${pathname}`, unrecognised: true }],
    };
  }
  const target = headerOf(request, 'x-amz-target') ?? '';
  const targeted = (
    prefix: string,
    map: (operation: string, body: Json, where: Where) => IamCall[] | undefined,
  ) => {
    const operation = target.startsWith(prefix) ? target.slice(prefix.length) : '';
    const body = jsonOf(request.body);
    const calls = operation && method === 'POST' && body ? map(operation, body, where) : undefined;
    return calls ? { service, operation, calls } : unknown(service, method, pathname, operation || 'Unknown');
  };
  switch (service) {
    case 'dynamodb':
      return targeted('DynamoDB_20120810.', dynamodbCalls);
    case 'kms':
      return targeted('TrentService.', kmsCalls);
    case 'events':
      return targeted('AWSEvents.', eventsCalls);
    case 'secretsmanager':
      return targeted('secretsmanager.', secretsManagerCalls);
    case 's3': {
      const found = s3Calls(method, pathname, query, (name) => headerOf(request, name), request.body);
      return found ? { service, ...found } : unknown(service, method, pathname);
    }
    case 'ses':
      return sesCallsOf(request, method, pathname, where);
    case 'cloudfront': {
      const found = cloudFrontCalls(method, pathname, where);
      return found
        ? { service, operation: found.operation, calls: found.calls }
        : unknown(service, method, pathname);
    }
    case 'cloudfront-keyvaluestore': {
      // The store is named by its ARN in the path; the action is the operation's.
      const found = keyValueStoreRequest(method, pathname);
      return found
        ? {
            service,
            operation: found.operation,
            calls: [{ action: `${service}:${found.operation}`, resource: found.kvsArn }],
          }
        : unknown(service, method, pathname);
    }
    default:
      return unknown(service, method, pathname);
  }
}

function sesCallsOf(request: AwsRequest, method: string, pathname: string, where: Where): IamCalls {
  if (method === 'POST' && pathname === '/v2/email/outbound-emails') {
    const body = jsonOf(request.body);
    const raw = (body?.Content as { Raw?: { Data?: unknown } } | undefined)?.Raw?.Data;
    const from = text(body?.FromEmailAddress) ?? rawFrom(text(raw));
    const calls = body && sesCall('ses:SendEmail', text(body.FromEmailAddressIdentityArn), from, where);
    return calls
      ? { service: 'ses', operation: 'SendEmail', calls }
      : unknown('ses', method, pathname, 'SendEmail');
  }
  // SES v1: the query protocol, a form body `Action=...&...`.
  const form = method === 'POST' ? new URLSearchParams(request.body.toString('utf8')) : new URLSearchParams();
  const operation = form.get('Action') ?? 'Unknown';
  const source = form.get('Source') ?? undefined;
  const calls =
    operation === 'SendEmail'
      ? sesCall('ses:SendEmail', form.get('SourceArn') ?? undefined, source, where)
      : operation === 'SendRawEmail'
        ? sesCall(
            'ses:SendRawEmail',
            form.get('FromArn') ?? form.get('SourceArn') ?? undefined,
            source ?? rawFrom(form.get('RawMessage.Data') ?? undefined),
            where,
          )
        : undefined;
  return calls ? { service: 'ses', operation, calls } : unknown('ses', method, pathname, operation);
}
