// The service's public address: the CloudFront distribution in front of the API, the images and the console,
// its custom domain and alias records, and the cdk-nag findings it answers.
import { Fn, SecretValue, type Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AccessLevel,
  AllowedMethods,
  CachePolicy,
  Distribution,
  FunctionEventType,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { AaaaRecord, ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { ORIGIN_VERIFY_HEADER } from '#lib/http/event.ts';
import { CONSOLE_PATH_PATTERN, CONSOLE_ROOT_OBJECT, deployConsole } from './console.ts';
import { API_ORIGIN_ID, createEdgePolicies, deploymentEdgeRules } from './edge.ts';
import type { DomainSettings } from './infra-settings.ts';
import type { StageConfig } from './stage-config.ts';
import { createWebAcl } from './waf.ts';

/**
 * Images: originals from the bucket, renditions (with a query) from the API; the rest of the URL space
 * goes to the API.
 */
export const IMAGE_PATH_PATTERN = '/i/*';

/** A share's images through its door (/s/<id>/i/<grant>): the shares function, cached briefly. */
export const SHARE_IMAGE_PATH_PATTERN = '/s/*/i/*';
/** Share pages (and their password form and random image), after their images' pattern. */
export const SHARE_PAGE_PATH_PATTERN = '/s/*';
/** The public gallery's pages. */
export const GALLERY_PATH_PATTERN = '/api/v1/gallery';

export interface CdnProps {
  config: StageConfig;
  api: HttpApi;
  originSecret: Secret;
  /** The files bucket: images under /i/*, the console under /console/*. */
  bucket: Bucket;
  /** Where CloudFront's standard logs go. */
  logBucket: Bucket;
  /** The web console build, deployed with the distribution when it holds index.html. */
  consoleDir: string;
}

/** Built in the stack's own scope, so the distribution keeps its logical id. */
export function createDistribution(stack: Stack, props: CdnProps): Distribution {
  const { config, bucket } = props;
  const apiOrigin = new HttpOrigin(Fn.select(2, Fn.split('/', props.api.apiEndpoint)), {
    // Named, so the /i/* viewer-request function can send renditions here (imageKeyFunction).
    originId: API_ORIGIN_ID,
    protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    // One front door: the functions serve only requests carrying the origin secret. A dynamic reference,
    // resolved by CloudFormation at deploy time: the template names the secret, never its value.
    customHeaders: {
      [ORIGIN_VERIFY_HEADER]: SecretValue.secretsManager(props.originSecret.secretArn, {
        jsonField: 'current',
        ...(config.infra.originSecretVersion ? { versionId: config.infra.originSecretVersion } : {}),
      }).unsafeUnwrap(),
    },
  });
  const edge = createEdgePolicies(
    stack,
    bucket,
    config.settings.cdn.deleted_max_age_seconds,
    deploymentEdgeRules(config.settings.hotlink),
  );
  // LIST makes a missing key a 404 instead of S3's 403; /i/* lets through query-less image keys only (any
  // query goes to the API), /console/* maps to the console/ prefix and forwards no query string, so no
  // request can list the bucket.
  const bucketOrigin = S3BucketOrigin.withOriginAccessControl(bucket, {
    originAccessLevels: [AccessLevel.READ, AccessLevel.LIST],
  });
  const { domain } = config.infra;

  const publicPages = () => ({
    origin: apiOrigin,
    allowedMethods: AllowedMethods.ALLOW_ALL,
    cachePolicy: edge.publicPageCache,
    originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    responseHeadersPolicy: edge.securityHeaders,
    functionAssociations: [{ function: edge.viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
  });
  const distribution = new Distribution(stack, 'Cdn', {
    comment: `Public address of the ${config.stage} service`,
    httpVersion: HttpVersion.HTTP2_AND_3,
    defaultBehavior: {
      origin: apiOrigin,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      // Everything but Host: API Gateway routes by its own host name.
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      responseHeadersPolicy: edge.securityHeaders,
      functionAssociations: [{ function: edge.viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
    },
    additionalBehaviors: {
      // Originals from the bucket, renditions (any query) from the render function behind the API: the
      // viewer-request function picks the origin, one cache policy keys both (infra/edge.ts).
      [IMAGE_PATH_PATTERN]: {
        origin: bucketOrigin,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: edge.imageCache,
        originRequestPolicy: edge.imageOriginRequest,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: edge.imageHeaders,
        functionAssociations: [{ function: edge.imageKey, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      // A share's images: the shares function checks the share on every request that reaches it, and the
      // edge keeps an answer no longer than it says (a minute at most). The same sandboxing headers as /i/*.
      [SHARE_IMAGE_PATH_PATTERN]: {
        origin: apiOrigin,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: edge.shareImageCache,
        originRequestPolicy: edge.imageOriginRequest,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: edge.imageHeaders,
      },
      // Anonymous public pages: the API as by default (every viewer header but Host, the viewer's address),
      // but kept at the edge as long as the answer says, a minute at most (docs/CAPACITY.md "Viral reads").
      [SHARE_PAGE_PATH_PATTERN]: publicPages(),
      [GALLERY_PATH_PATTERN]: publicPages(),
      // The web console from the bucket's console/ prefix (hashed assets cached long, the page revalidated
      // by its own Cache-Control); every other path stays the API's.
      [CONSOLE_PATH_PATTERN]: {
        origin: bucketOrigin,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: edge.consoleHeaders,
      },
    },
    // `/` becomes /console/index.html before the behaviours are matched, so it reaches the console
    // behaviour; no API route lives at `/`.
    defaultRootObject: CONSOLE_ROOT_OBJECT,
    enableLogging: true,
    logBucket: props.logBucket,
    logFilePrefix: 'cdn/',
    ...(domain
      ? {
          domainNames: [domain.name],
          certificate: Certificate.fromCertificateArn(stack, 'Certificate', domain.certificateArn),
          minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
        }
      : {}),
    ...(config.infra.webAclArn ? { webAclId: config.infra.webAclArn } : {}),
    ...(config.infra.waf ? { webAclId: createWebAcl(stack, config.infra.waf).attrArn } : {}),
  });

  acknowledgeFindings(distribution, config);
  if (domain?.hostedZoneId) addAliasRecords(stack, distribution, domain, domain.hostedZoneId);
  deployConsole(stack, bucket, distribution, props.consoleDir);
  return distribution;
}

/** The zone is named by id only; the record names are absolute, so its name is never needed. */
function addAliasRecords(stack: Stack, distribution: Distribution, domain: DomainSettings, zoneId: string) {
  const zone = HostedZone.fromHostedZoneId(stack, 'Zone', zoneId);
  const target = RecordTarget.fromAlias(new CloudFrontTarget(distribution));
  new ARecord(stack, 'AliasA', { zone, recordName: `${domain.name}.`, target });
  new AaaaRecord(stack, 'AliasAAAA', { zone, recordName: `${domain.name}.`, target });
}

function acknowledgeFindings(distribution: Distribution, config: StageConfig): void {
  Validations.of(distribution).acknowledge(
    {
      id: 'Annotation::@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
      reason:
        'The LIST origin serves only /i/* and /console/*, never the root, and never with a query string: ' +
        '/console/* forwards none, and the /i/* viewer-request function sends every request with a query ' +
        'to the API origin and lets through to the bucket nothing but query-less image keys, so no request ' +
        'can list the bucket.',
    },
    {
      id: 'AwsSolutions-CFR1',
      reason: 'A public image host and API for users anywhere; no country is excluded by any requirement.',
    },
  );
  if (!config.infra.domain) {
    Validations.of(distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution uses the default *.cloudfront.net certificate, whose viewer TLS policy CloudFront ' +
        'fixes; infra.domain_name with infra.certificate_arn serves the custom domain with TLSv1.2_2021.',
    });
  }
  if (!config.infra.webAclArn && !config.infra.waf) {
    Validations.of(distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'This stage has neither infra.waf (a web ACL the stack creates, us-east-1 stacks only; on by default ' +
        'in prod) nor infra.web_acl_arn (one made in us-east-1 apart). Abuse limits live in API Gateway ' +
        'throttling, reserved concurrency and the per-IP and per-target counters of the service (docs/DESIGN.md 5).',
    });
  }
}
