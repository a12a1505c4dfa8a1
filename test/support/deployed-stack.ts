// Runs the synthesized stack as AWS would: each function's asset from cdk.out in its own Node process
// (read-only code folder, a writable temp folder, exactly the template's environment), reached through the
// template's own routes and function URL, with every AWS call checked against that function's IAM policy
// by its own AWS gateway (test/support/deployed/). docs/CONTRIBUTING.md explains what this proves.
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type LambdaCpu, NATIVE_ADDON_NAMES, NATIVE_ADDONS, PROJECT_ROOT } from '#infra/bundling.ts';
import { buildEvent } from '#infra/local/api-event.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { ensureBucket } from '#infra/local/provision.ts';
import { buildServiceApp } from '#infra/service-app.ts';
import type { StageConfig } from '#infra/stage-config.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { compilePath, matchRoute } from '#lib/http/routes.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { CDK_CONTEXT } from '#test/support/cdk-context.ts';
import { type AwsGateway, startAwsGateway } from '#test/support/deployed/aws-gateway.ts';
import { type IntrinsicResolver, pseudoParameters, resolveIntrinsics } from '#test/support/deployed/cfn.ts';
import { createFakeCloudFront, type FakeCloudFront } from '#test/support/deployed/fake-cloudfront.ts';
import { createFakeEventBridge, type FakeEventBridge } from '#test/support/deployed/fake-eventbridge.ts';
import { createFakeKms, type FakeKms } from '#test/support/deployed/fake-kms.ts';
import { createFakeKeyValueStore, type FakeKeyValueStore } from '#test/support/deployed/fake-kvs.ts';
import {
  createFakeSecretsManager,
  type FakeSecretsManager,
  generateSecretString,
} from '#test/support/deployed/fake-secrets-manager.ts';
import type { PolicyStatement } from '#test/support/deployed/iam.ts';
import { createContract } from './contract.ts';

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation JSON, read by shape
type Json = Record<string, any>;

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';
const NOBODY = 65534;
/** What `Ref` of the stack's CloudFront distribution resolves to (an id in CloudFront's format). */
export const DISTRIBUTION_ID = 'E2DEPLOYEDSHAPE';
/** The address API Gateway sees behind CloudFront: an edge server's, never the viewer's. */
export const EDGE_ADDRESS = '198.51.100.7';

export interface DeployedFunction {
  group: string;
  logicalId: string;
  /** The environment the template gives it, intrinsics resolved. */
  templateEnvironment: Record<string, string>;
  policy: PolicyStatement[];
  gateway: AwsGateway;
  process: FunctionProcess;
  /** Everything the function wrote to stdout and stderr. */
  output: string[];
  /** The asset folder as built (cdk.out), its top-level entries, and the packages in its node_modules. */
  asset: string;
  assetEntries: string[];
  shippedPackages: string[];
  invocations: number;
}

export interface Answer {
  /** The function that answered. */
  group: string;
  status: number;
  headers: Record<string, string>;
  /** The body as sent (an image's bytes), and as UTF-8 text. */
  body: Buffer;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response data of many shapes
  json: any;
}

export interface RequestInput {
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  sourceIp?: string;
}

export interface DeployedStack {
  functions: Map<string, DeployedFunction>;
  kms: FakeKms;
  events: FakeEventBridge;
  /** The invalidations the functions created in the stack's distribution. */
  cloudfront: FakeCloudFront;
  /** The edge's deny-list (the KeyValueStore the takedowns worker writes). */
  keyValueStore: FakeKeyValueStore;
  /** The origin secret (and any other secret the template generates). */
  secrets: FakeSecretsManager;
  /** The ARN of the CDN's origin secret. */
  originSecretArn: string;
  /**
   * What the CDN adds to every API request: its origin custom headers as the template declares them (the
   * dynamic reference resolved now, as CloudFormation does at each deploy of the distribution).
   */
  cdnHeaders: Record<string, string>;
  /** Re-resolves the CDN's headers, as a deploy of the distribution after a rotation does. */
  redeployCdn(): void;
  tableName: string;
  bucketName: string;
  /** What the x64 machine did to run the arm64 assets with native addons (auth, render), if anything. */
  notes: string[];
  /** The error lines a function has logged: what a failed assertion shows, as CloudWatch would. */
  errorLog(group: string): string;
  /**
   * Through the CDN and API Gateway: CloudFront adds its origin headers and the viewer's address (the
   * viewer-request function), API Gateway's route (or $default) picks the function.
   */
  api(method: string, path: string, input?: RequestInput): Promise<Answer>;
  /**
   * Straight to the execute-api address, as anyone on the Internet can: no CDN headers (the caller may
   * forge some), and answers are not held to the API document (a refusal is no route's answer).
   */
  direct(method: string, path: string, input?: RequestInput): Promise<Answer>;
  /** Through the callback function's URL, as a channel posts its notification. */
  functionUrl(method: string, path: string, input?: RequestInput): Promise<Answer>;
  /**
   * Invokes a worker (functions/needs.ts WORKER_NEEDS) with an event as its trigger would deliver it (a
   * stream batch, a schedule); resolves to what it returned.
   */
  invokeWorker(name: string, event: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

interface TemplateRoute {
  method: string;
  path: string;
  pattern: RegExp;
  names: string[];
  literal: number;
  functionId: string;
}

export interface DeployOptions {
  config: StageConfig;
  tableName: string;
  bucketName: string;
  upstream: { dynamodb: string; s3: string; ses?: string };
}

/** The function group (`Fn-<group>`) or worker (`Worker-<name>`) a Lambda function of the template runs. */
function groupOf(resource: Json): string | undefined {
  const path = String(resource.Metadata?.['aws:cdk:path'] ?? '');
  return /\/(?:Fn|Worker)-([a-z-]+)\/Function\/Resource$/.exec(path)?.[1];
}

/** Everything below `dir` read-only (0555/0444): as root this is only advice, so the process runs as nobody. */
function makeReadOnly(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) makeReadOnly(path);
    else if (entry.isFile()) chmodSync(path, 0o444);
  }
  chmodSync(dir, 0o555);
}

function synthesize(options: DeployOptions, outdir: string): Json {
  const { app, stack } = buildServiceApp({
    config: options.config,
    outdir,
    bundling: true,
    // What the CDK CLI turns on for every synth: each resource names its construct path and asset folder.
    context: {
      ...CDK_CONTEXT,
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
    },
  });
  app.synth();
  return JSON.parse(readFileSync(join(outdir, `${stack.stackName}.template.json`), 'utf8')) as Json;
}

function resolverFor(template: Json, names: { tableName: string; bucketName: string }, stackName: string) {
  const resources = template.Resources as Record<string, Json>;
  const typeOf = (id: string) => resources[id]?.Type as string | undefined;
  const keyIds = new Map<string, string>();
  const keyId = (id: string) => {
    if (!keyIds.has(id)) keyIds.set(id, randomUUID());
    return keyIds.get(id)!;
  };
  const ref = (id: string): string => {
    switch (typeOf(id)) {
      case 'AWS::DynamoDB::Table':
        return names.tableName;
      case 'AWS::S3::Bucket':
        return id.startsWith('Files') ? names.bucketName : `${id.toLowerCase()}-bucket`;
      case 'AWS::KMS::Key':
        return keyId(id);
      case 'AWS::Events::EventBus':
        return `bus-${id}`;
      case 'AWS::CloudFront::Distribution':
        return DISTRIBUTION_ID;
      case 'AWS::SecretsManager::Secret':
        // A secret's Ref is its ARN, with Secrets Manager's random suffix.
        return `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-AbCdEf`;
      case 'AWS::Logs::LogGroup':
        return `/aws/lambda/${id}`;
      case undefined:
        throw new Error(`Ref to unknown resource ${id}`);
      default:
        return id;
    }
  };
  const getAtt = (id: string, attribute: string): string => {
    const type = typeOf(id);
    if (attribute === 'Arn') {
      if (type === 'AWS::DynamoDB::Table') return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${ref(id)}`;
      if (type === 'AWS::S3::Bucket') return `arn:aws:s3:::${ref(id)}`;
      if (type === 'AWS::KMS::Key') return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${ref(id)}`;
      if (type === 'AWS::Events::EventBus') return `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${ref(id)}`;
      if (type === 'AWS::Logs::LogGroup') return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${ref(id)}:*`;
      if (type === 'AWS::Lambda::Function') return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
      if (type === 'AWS::CloudFront::KeyValueStore')
        return `arn:aws:cloudfront::${ACCOUNT}:key-value-store/${keyId(id)}`;
      return `arn:aws:local:${REGION}:${ACCOUNT}:${id}`;
    }
    if (type === 'AWS::CloudFront::Distribution' && attribute === 'DomainName')
      return 'd111111abcdef8.cloudfront.net';
    if (type === 'AWS::Lambda::Url' && attribute === 'FunctionUrl')
      return `https://${id.toLowerCase()}.lambda-url.${REGION}.on.aws/`;
    if (type === 'AWS::ApiGatewayV2::Api' && attribute === 'ApiEndpoint')
      return `https://${id.toLowerCase()}.execute-api.${REGION}.amazonaws.com`;
    return `${id}.${attribute}`;
  };
  const resolver: IntrinsicResolver = {
    ref,
    getAtt,
    pseudo: pseudoParameters({ region: REGION, account: ACCOUNT, stackName }),
  };
  return resolver;
}

function compileRoute(routeKey: string, functionId: string): TemplateRoute {
  const [method, path] = routeKey.split(' ') as [string, string];
  // The same matching the local server uses (lib/http/routes.ts), over the template's route keys.
  const { pattern, names, literalLength } = compilePath(path);
  return { method, path, pattern, names, literal: literalLength, functionId };
}

/** API Gateway's routes as the template declares them, most specific first, and the $default function. */
function routesOf(template: Json, resolver: IntrinsicResolver) {
  const resources = template.Resources as Record<string, Json>;
  const functionOfIntegration = (target: unknown): string => {
    const integrationId = String(resolveIntrinsics(target, { ...resolver, ref: (id) => id })).replace(
      /^integrations\//,
      '',
    );
    const uri = resources[integrationId]?.Properties?.IntegrationUri;
    const arn = String(resolveIntrinsics(uri, resolver));
    return arn.slice(arn.lastIndexOf(':') + 1);
  };
  const routes: TemplateRoute[] = [];
  let defaultFunction: string | undefined;
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::ApiGatewayV2::Route') continue;
    const functionId = functionOfIntegration(resource.Properties.Target);
    if (resource.Properties.RouteKey === '$default') defaultFunction = functionId;
    else routes.push(compileRoute(resource.Properties.RouteKey, functionId));
  }
  routes.sort((a, b) => b.literal - a.literal);
  if (!defaultFunction) throw new Error('the template has no $default route');
  return { routes, defaultFunction };
}

function toAnswer(group: string, result: ApiResult): Answer {
  const body =
    result.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    group,
    status: result.statusCode ?? 200,
    headers: (result.headers ?? {}) as Record<string, string>,
    body,
    text,
    json,
  };
}

function eventFor(
  method: string,
  path: string,
  routeKey: string,
  input: RequestInput,
  params?: Record<string, string>,
): ApiEvent {
  const headers: Record<string, string> = { ...input.headers };
  let body: Buffer = Buffer.alloc(0);
  if (Buffer.isBuffer(input.body)) body = input.body;
  else if (typeof input.body === 'string') body = Buffer.from(input.body);
  else if (input.body !== undefined) {
    body = Buffer.from(JSON.stringify(input.body));
    headers['content-type'] ??= 'application/json';
  }
  return buildEvent({
    method,
    url: path,
    headers,
    body,
    sourceIp: input.sourceIp ?? '203.0.113.10',
    routeKey,
    ...(params ? { pathParameters: params } : {}),
  });
}

/** The host script, built once for plain `node` (the functions run without tsx, as in Lambda). */
async function buildHost(into: string): Promise<string> {
  const outfile = join(into, 'function-host.mjs');
  await build({
    entryPoints: [join(PROJECT_ROOT, 'infra/local/function-host.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

export async function deployLocally(options: DeployOptions): Promise<DeployedStack> {
  const root = mkdtempSync(join(tmpdir(), 'deployed-shape-'));
  chmodSync(root, 0o755);
  const asRoot = process.getuid?.() === 0;
  const stackName = `AccountUploadPayment-${options.config.stage}`;
  const outdir = join(root, 'cdk.out');
  const template = synthesize(options, outdir);
  const resources = template.Resources as Record<string, Json>;
  const resolver = resolverFor(template, options, stackName);
  const notes: string[] = [];

  const keyArns = Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::KMS::Key')
    .map(([id]) => resolver.getAtt(id, 'Arn'));
  const kms = createFakeKms({ keyArns });
  const events = createFakeEventBridge();
  // Each generated secret as CloudFormation would create it (GenerateSecretString).
  const generated = Object.entries(resources).filter(
    ([, resource]) => resource.Type === 'AWS::SecretsManager::Secret',
  );
  const secrets = createFakeSecretsManager(
    Object.fromEntries(
      generated.map(([id, resource]) => [
        resolver.ref(id),
        generateSecretString(resource.Properties.GenerateSecretString),
      ]),
    ),
  );
  if (generated.length !== 1) throw new Error(`expected one generated secret, found ${generated.length}`);
  const originSecretArn = resolver.ref(generated[0]![0]);
  const cloudfront = createFakeCloudFront({
    distributionIds: Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::CloudFront::Distribution')
      .map(([id]) => resolver.ref(id)),
  });
  const keyValueStore = createFakeKeyValueStore({
    storeArns: Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::CloudFront::KeyValueStore')
      .map(([id]) => resolver.getAtt(id, 'Arn')),
  });
  const hostDir = join(root, 'host');
  mkdirSync(hostDir, { mode: 0o755 });
  const host = await buildHost(hostDir);
  makeReadOnly(hostDir);

  const policiesOfRole = (roleId: string): PolicyStatement[] =>
    Object.values(resources)
      .filter(
        (resource) =>
          resource.Type === 'AWS::IAM::Policy' &&
          (resource.Properties.Roles as Json[]).some((role) => role.Ref === roleId),
      )
      .flatMap(
        (resource) => resolveIntrinsics(resource.Properties.PolicyDocument.Statement, resolver) as never[],
      );

  const functions = new Map<string, DeployedFunction>();
  const byLogicalId = new Map<string, DeployedFunction>();
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The stack's other buckets (the access logs the bandwidth worker lists), as CloudFormation makes them.
    const s3 = s3Client({ region: REGION, s3_endpoint: options.upstream.s3 });
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (resource.Type === 'AWS::S3::Bucket' && !logicalId.startsWith('Files'))
        await ensureBucket(s3, `${logicalId.toLowerCase()}-bucket`);
    }
    const starting = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && groupOf(resource))
      .map(async ([logicalId, resource]) => {
        const group = groupOf(resource)!;
        const props = resource.Properties as Json;
        const asset = join(outdir, String(resource.Metadata['aws:asset:path']));
        const [moduleName, exportName] = String(props.Handler).split('.') as [string, string];

        // The code folder: a copy of the asset, read-only; beside each native addon built for Lambda's
        // arm64 (argon2, sharp with its libvips), this machine's build of the same version when they differ
        // (infra/bundling.ts NATIVE_ADDONS; docs/CONTRIBUTING.md).
        const code = join(root, group, 'code');
        mkdirSync(join(root, group), { recursive: true, mode: 0o755 });
        cpSync(asset, code, { recursive: true });
        const here: LambdaCpu = process.arch === 'arm64' ? 'arm64' : 'x64';
        for (const addon of NATIVE_ADDON_NAMES) {
          const { package: name, binaries } = NATIVE_ADDONS[addon];
          const shipped = binaries('arm64').every(({ dir }) => existsSync(join(code, 'node_modules', dir)));
          if (!shipped || here === 'arm64') continue;
          for (const { dir } of binaries(here)) {
            cpSync(join(PROJECT_ROOT, 'node_modules', dir), join(code, 'node_modules', dir), {
              recursive: true,
            });
          }
          notes.push(
            `${group}: the asset ships ${name} for arm64 (checked present); the same version's ${here} build was placed beside it to run here`,
          );
        }
        makeReadOnly(code);
        const tmp = join(root, group, 'tmp');
        mkdirSync(tmp, { mode: 0o700 });
        if (asRoot) chownSync(tmp, NOBODY, NOBODY);

        const templateEnvironment = resolveIntrinsics(props.Environment?.Variables ?? {}, resolver) as Record<
          string,
          string
        >;
        const roleId = props.Role['Fn::GetAtt'][0] as string;
        const policy = policiesOfRole(roleId);
        const gateway = await startAwsGateway({
          functionName: group,
          policy,
          region: REGION,
          account: ACCOUNT,
          upstream: options.upstream,
          kms,
          events,
          cloudfront,
          keyValueStore,
          secrets,
        });
        cleanups.push(() => gateway.close());
        const output: string[] = [];
        const moduleFile = ['mjs', 'js', 'cjs']
          .map((extension) => join(code, `${moduleName}.${extension}`))
          .find((file) => existsSync(file));
        if (!moduleFile) throw new Error(`${group}: no ${moduleName}.mjs/.js/.cjs in its asset`);
        const fn = await startFunctionProcess({
          name: group,
          host,
          module: moduleFile,
          exportName,
          cwd: code,
          serial: true,
          ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
          output: (line) => output.push(line),
          env: {
            ...templateEnvironment,
            // What the Lambda runtime provides.
            AWS_REGION: REGION,
            AWS_DEFAULT_REGION: REGION,
            AWS_ACCESS_KEY_ID: 'S3RVER',
            AWS_SECRET_ACCESS_KEY: 'S3RVER',
            AWS_SESSION_TOKEN: 'deployed-shape',
            AWS_LAMBDA_FUNCTION_NAME: `${stackName}-${logicalId}`,
            AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(props.MemorySize),
            AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
            AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
            LAMBDA_TASK_ROOT: code,
            TZ: ':UTC',
            LANG: 'en_US.UTF-8',
            PATH: '/usr/local/bin:/usr/bin:/bin',
            TMPDIR: tmp,
            LOCAL_FUNCTION_TIMEOUT_MS: String(Number(props.Timeout ?? 3) * 1000),
            // Node 20 runs here, 22 in Lambda: the SDK's notice about that is noise.
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            // Where AWS's endpoints would be: this function's own gateway, which checks its policy.
            AWS__DYNAMODB_ENDPOINT: gateway.endpoint,
            AWS__S3_ENDPOINT: gateway.endpoint,
            AWS__KMS_ENDPOINT: gateway.endpoint,
            AWS__EVENTS_ENDPOINT: gateway.endpoint,
            AWS__SES_ENDPOINT: gateway.endpoint,
            AWS__CLOUDFRONT_ENDPOINT: gateway.endpoint,
            AWS__SECRETS_MANAGER_ENDPOINT: gateway.endpoint,
          },
        });
        cleanups.push(() => fn.stop());
        const deployed: DeployedFunction = {
          group,
          logicalId,
          asset,
          assetEntries: readdirSync(asset).sort(),
          shippedPackages: existsSync(join(asset, 'node_modules'))
            ? readdirSync(join(asset, 'node_modules')).filter((name) => !name.startsWith('.'))
            : [],
          templateEnvironment,
          policy,
          gateway,
          process: fn,
          output,
          invocations: 0,
        };
        functions.set(group, deployed);
        byLogicalId.set(logicalId, deployed);
      });
    const outcomes = await Promise.allSettled(starting);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await stop();
    throw error;
  }

  const { routes, defaultFunction } = routesOf(template, resolver);
  const urlFunction = Object.values(resources).find((resource) => resource.Type === 'AWS::Lambda::Url');
  const urlTarget = String(resolveIntrinsics(urlFunction?.Properties.TargetFunctionArn, resolver));
  const callbackFunction = urlTarget.slice(urlTarget.lastIndexOf(':') + 1);

  // Every answer is held to the API document (the contract test): a mismatch fails the call, named.
  const contract = createContract();
  const routeKeyOf = (method: string, path: string) => {
    const decoded = decodeURIComponent(new URL(path, 'http://api').pathname);
    const route = routes.find((candidate) => candidate.method === method && candidate.pattern.test(decoded));
    return route ? `${route.method} ${route.path}` : '$default';
  };
  // The CDN's origin headers, from the distribution's API origin (the $default behaviour's).
  const distribution = Object.values(resources).find(
    (resource) => resource.Type === 'AWS::CloudFront::Distribution',
  )?.Properties.DistributionConfig as Json;
  const apiOrigin = (distribution.Origins as Json[]).find(
    (origin) => origin.Id === distribution.DefaultCacheBehavior.TargetOriginId,
  )!;
  const resolveCdnHeaders = (): Record<string, string> =>
    Object.fromEntries(
      ((apiOrigin.OriginCustomHeaders ?? []) as Json[]).map((header) => [
        String(header.HeaderName).toLowerCase(),
        secrets.resolveReferences(String(resolveIntrinsics(header.HeaderValue, resolver))),
      ]),
    );
  let cdnHeaders = resolveCdnHeaders();
  const throughCdn = (input: RequestInput): RequestInput => ({
    ...input,
    // What CloudFront does: its origin headers and the viewer's address (written over the client's), and
    // the connection API Gateway sees is the edge's.
    headers: {
      ...input.headers,
      ...cdnHeaders,
      'x-viewer-address': input.sourceIp ?? '203.0.113.10',
    },
    sourceIp: EDGE_ADDRESS,
  });

  // A function URL has no API Gateway routes: its function routes by path (lib/http/routes.ts), as it does.
  const functionUrlRouteKeyOf = (method: string, path: string) => {
    const match = matchRoute(method, decodeURIComponent(new URL(path, 'http://api').pathname));
    return match ? `${match.route.method} ${match.route.path}` : '$default';
  };
  const invoke = async (
    logicalId: string,
    event: ApiEvent,
    checkContract: boolean | 'function-url' = true,
  ): Promise<Answer> => {
    const fn = byLogicalId.get(logicalId);
    if (!fn) throw new Error(`no running function ${logicalId}`);
    fn.invocations += 1;
    const answer = toAnswer(fn.group, await fn.process.invoke(event));
    if (!checkContract) return answer;
    const mismatches = contract.check({
      routeKey:
        checkContract === 'function-url'
          ? functionUrlRouteKeyOf(event.requestContext.http.method, event.rawPath)
          : routeKeyOf(event.requestContext.http.method, event.rawPath),
      status: answer.status,
      headers: answer.headers,
      body: answer.text,
    });
    if (mismatches.length > 0)
      throw new Error(`answer does not match docs/openapi.json: ${mismatches.join('; ')}`);
    return answer;
  };

  /** API Gateway: the template's route (or $default) picks the function. */
  const throughApiGateway = (method: string, path: string, input: RequestInput, checkContract: boolean) => {
    const pathname = new URL(path, 'http://api').pathname;
    const decoded = decodeURIComponent(pathname);
    for (const route of routes) {
      if (route.method !== method) continue;
      const found = route.pattern.exec(decoded);
      if (!found) continue;
      const params = Object.fromEntries(route.names.map((name, index) => [name, found[index + 1]!]));
      return invoke(
        route.functionId,
        eventFor(method, path, `${route.method} ${route.path}`, input, params),
        checkContract,
      );
    }
    return invoke(defaultFunction, eventFor(method, path, '$default', input), checkContract);
  };

  return {
    functions,
    kms,
    events,
    cloudfront,
    keyValueStore,
    secrets,
    originSecretArn,
    get cdnHeaders() {
      return cdnHeaders;
    },
    redeployCdn() {
      cdnHeaders = resolveCdnHeaders();
    },
    tableName: options.tableName,
    bucketName: options.bucketName,
    notes,
    errorLog: (group) =>
      (functions.get(group)?.output ?? [])
        .filter((line) => /"level":"(error|warn)"|Error/.test(line))
        .join('\n'),
    api(method, path, input = {}) {
      return throughApiGateway(method, path, throughCdn(input), true);
    },
    direct(method, path, input = {}) {
      return throughApiGateway(method, path, input, false);
    },
    functionUrl(method, path, input = {}) {
      // Lambda names the domain the request arrived on: the function URL's own (the front door tells it
      // from API Gateway's by that).
      const host = `${callbackFunction.toLowerCase()}.lambda-url.${REGION}.on.aws`;
      const event = eventFor(method, path, '$default', { ...input, headers: { ...input.headers, host } });
      return invoke(callbackFunction, event, 'function-url');
    },
    async invokeWorker(name, event) {
      const fn = functions.get(name);
      if (!fn) throw new Error(`no running worker ${name}`);
      fn.invocations += 1;
      return fn.process.invoke(event as never);
    },
    stop,
  };
}
