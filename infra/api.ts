// The API: one function per group of lib/http/routes.ts, the HTTP API with its stage, routes and access log,
// the payment notify URL, and each function's grants from what its group needs.
import { Duration, Fn, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { type FunctionUrl, FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GROUP_NEEDS } from '#functions/needs.ts';
import { DERIVED_PREFIX } from '#lib/files/prefixes.ts';
import {
  DEFAULT_ROUTE_GROUP,
  FUNCTION_GROUPS,
  type FunctionGroup,
  ROUTES,
  type RouteSpec,
  routeKeyOf,
} from '#lib/http/routes.ts';
import { bucketObjectsFinding } from './data.ts';
import { type FunctionClass, type NeedResources, RUNTIME, ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';

interface FunctionSpec {
  functionClass: FunctionClass;
  timeoutSeconds: number;
}

/**
 * Size and time per group; a Record so a new group in lib/http/routes.ts does not compile until it has one.
 * What each group ships outside its bundle (argon2, channel_b's SDK) is in infra/bundling.ts.
 */
export const FUNCTION_SPECS: Record<FunctionGroup, FunctionSpec> = {
  accounts: { functionClass: 'password-hashing', timeoutSeconds: 10 },
  // API Gateway stops waiting after 30 s; confirm streams up to upload.presign_max_bytes from S3.
  files: { functionClass: 'io', timeoutSeconds: 29 },
  meta: { functionClass: 'light', timeoutSeconds: 10 },
  // Share pages and opens: argon2 for a share's password, like an account's. A share's thumbnail may be
  // rendered through its own door on a first request, under the same render deadline as render's.
  shares: { functionClass: 'password-hashing', timeoutSeconds: 29 },
  // A first render of up to images.max_input_pixels, abandoned by the renderer after
  // images.render_timeout_seconds (20 s); API Gateway stops waiting after 30 s.
  render: { functionClass: 'image-rendering', timeoutSeconds: 29 },
  payments: { functionClass: 'io', timeoutSeconds: 20 },
  'payment-callback': { functionClass: 'io', timeoutSeconds: 20 },
};

// JSON lines of HTTP API variables only (the default format is the REST API's); never headers or bodies.
const API_ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    time: '$context.requestTime',
    routeKey: '$context.routeKey',
    method: '$context.httpMethod',
    path: '$context.path',
    status: '$context.status',
    length: '$context.responseLength',
    latency: '$context.responseLatency',
    integrationError: '$context.integrationErrorMessage',
  }),
);

/**
 * Built in the stack's own scope, so the functions, routes and permissions keep their logical ids (a
 * `Fn-<group>` path is also how the deployed-shape test finds them).
 */
export class ServiceApi {
  readonly functions: Record<FunctionGroup, ServiceFunction>;
  readonly callbackUrl: FunctionUrl;
  /** The callback URL's origin, which the payment channels are told to notify. */
  readonly notifyBaseUrl: string;
  readonly api: HttpApi;
  readonly stage: HttpStage;

  constructor(
    private readonly stack: Stack,
    config: StageConfig,
  ) {
    this.functions = this.createFunctions(config);
    // Lambda's runtime list moves on; the service pins the version it is tested on (docs/DESIGN.md 1).
    Validations.of(stack).acknowledge({
      id: 'AwsSolutions-L1',
      reason: `Functions run ${RUNTIME.name} as docs/DESIGN.md 1 fixes; moving runtimes is a deliberate, tested change.`,
    });

    // The notify address given to payment channels (docs/DESIGN.md 1): the callback function's own URL, a
    // second public front door where each notification proves itself by the channel's signature. Its routes
    // are in the HTTP API too (docs/SPEC.md lists them at the public address), where, as for every route,
    // the function refuses requests without the CDN's proof.
    this.callbackUrl = this.functions['payment-callback'].fn.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
    });
    this.notifyBaseUrl = `https://${Fn.select(2, Fn.split('/', this.callbackUrl.url))}`;

    ({ api: this.api, stage: this.stage } = this.createApi(config));
  }

  /**
   * Each function's grants and environment, both derived from what its group declares it needs
   * (functions/<group>/needs.ts): nothing here is kept in sync by hand.
   */
  applyNeeds(resources: NeedResources): void {
    for (const group of FUNCTION_GROUPS) {
      const fn = this.functions[group];
      const needs = GROUP_NEEDS[group];
      fn.applyNeeds(needs, resources);
      if (needs.bucket) {
        Validations.of(fn).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(resources.bucket)}]`,
          reason:
            'Object keys are minted per upload and per rendition (<yyyy>/<mm>/<dd>/<uuid>..., incoming/..., ' +
            'derived/...), so object actions are granted on the key space of this one bucket; the actions ' +
            'themselves are listed one by one.',
        });
      }
      if (needs.renditions) {
        Validations.of(fn).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(resources.bucket, DERIVED_PREFIX)}]`,
          reason:
            'A rendition is stored at derived/<record key>/<canonical query>, one key per file and query, so ' +
            'PutObject (the only action) is granted on that prefix of this one bucket and nowhere else.',
        });
      }
    }
  }

  private createFunctions(config: StageConfig): Record<FunctionGroup, ServiceFunction> {
    // Lambda allows 4 KB of environment in all; leave room for the per-key overrides.
    const appConfigBytes = Buffer.byteLength(JSON.stringify(config.appConfig));
    if (appConfigBytes > 2500)
      throw new Error(`The ${config.stage} config is ${appConfigBytes} bytes; keep it under 2500`);
    const entries = FUNCTION_GROUPS.map((group) => {
      const spec = FUNCTION_SPECS[group];
      const fn = new ServiceFunction(this.stack, `Fn-${group}`, {
        group,
        functionClass: spec.functionClass,
        timeout: Duration.seconds(spec.timeoutSeconds),
        // Each function keeps capacity when another is flooded, and none takes the account's (stage config).
        config,
      });
      return [group, fn] as const;
    });
    return Object.fromEntries(entries) as Record<FunctionGroup, ServiceFunction>;
  }

  private createApi(config: StageConfig): { api: HttpApi; stage: HttpStage } {
    const { corsOrigins, throttle } = config.infra;
    const api = new HttpApi(this.stack, 'Api', {
      description: `Account, upload and payment API (${config.stage})`,
      createDefaultStage: false,
      ...(corsOrigins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: corsOrigins,
              allowMethods: (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map(
                (m) => CorsHttpMethod[m],
              ),
              allowHeaders: ['authorization', 'content-type'],
              // x-request-id: a browser can show it for a support ticket (docs/OBSERVABILITY.md).
              exposeHeaders: ['retry-after', 'x-request-id'],
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });
    const stage = new HttpStage(this.stack, 'ApiStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: throttle.rateLimit, burstLimit: throttle.burstLimit },
      ...(config.infra.apiAccessLog ? { accessLogSettings: this.accessLogSettings(config) } : {}),
    });
    if (!config.infra.apiAccessLog)
      Validations.of(stage).acknowledge({
        id: 'AwsSolutions-APIG1',
        reason:
          "infra.api_access_log is off (prod's default): the CDN's standard logs record every request " +
          "(address, path, status, bytes) and each function writes the request's one line (docs/OBSERVABILITY.md).",
      });
    const routes = this.addRoutes(api);
    const { renderThrottle } = config.infra;
    if (renderThrottle) {
      // The render function's routes have their own throttle, inside the stage's (docs/DESIGN.md 23); the
      // settings name routes, which must exist first. A JSON map: CloudFormation's own property names.
      const render = ROUTES.filter((route) => route.group === 'render');
      const settings = {
        ThrottlingRateLimit: renderThrottle.rateLimit,
        ThrottlingBurstLimit: renderThrottle.burstLimit,
      };
      (stage.node.defaultChild as CfnStage).routeSettings = Object.fromEntries(
        render.map((route) => [routeKeyOf(route), settings]),
      );
      for (const route of render) stage.node.addDependency(routes.node.findChild(routeConstructId(route)));
    }
    return { api, stage };
  }

  private accessLogSettings(config: StageConfig) {
    const accessLogs = new LogGroup(this.stack, 'ApiAccessLogs', {
      retention: config.infra.logRetentionDays,
      removalPolicy: config.infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    return { destination: new LogGroupLogDestination(accessLogs), format: API_ACCESS_LOG_FORMAT };
  }

  private addRoutes(api: HttpApi): Construct {
    // One front door: every function API Gateway reaches refuses requests without the CDN's origin secret
    // (lib/http/front-door.ts), which only the `frontDoor` need lets it read. A group without it would be
    // reachable at the execute-api address: refuse to synthesize that.
    for (const group of FUNCTION_GROUPS) {
      if (!GROUP_NEEDS[group].frontDoor)
        throw new Error(
          `The ${group} function is reached through API Gateway but functions/${group}/needs.ts does not ` +
            'declare frontDoor: it would serve direct execute-api calls',
        );
    }

    // One integration (and one invoke permission) per function, not per route: 60+ route-scoped
    // permissions would crowd the functions' resource policies.
    const integrations = Object.fromEntries(
      FUNCTION_GROUPS.map((group) => [
        group,
        new HttpLambdaIntegration(`Integration-${group}`, this.functions[group].fn, {
          scopePermissionToRoute: false,
        }),
      ]),
    ) as Record<FunctionGroup, HttpLambdaIntegration>;

    const routes = new Construct(this.stack, 'Routes');
    for (const route of ROUTES) {
      new HttpRoute(routes, routeConstructId(route), {
        httpApi: api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: integrations[route.group],
      });
    }
    // Unmatched requests still reach the service, which answers its own 404 envelope.
    new HttpRoute(routes, 'Default', {
      httpApi: api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrations[DEFAULT_ROUTE_GROUP],
    });
    Validations.of(routes).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authentication is per route in the functions (lib/http/routes.ts auth kinds): revocable jose sessions, ' +
        'API tokens checked against their stored hash, and signed payment callbacks; many routes are public.',
    });
    return routes;
  }
}

/** A construct id derived from the route key, so reordering lib/http/routes.ts never replaces a route. */
export function routeConstructId(route: Pick<RouteSpec, 'method' | 'path'>): string {
  return `${route.method} ${route.path.replaceAll('/', '|')}`;
}
