// The web console in AWS (docs/DESIGN.md 14): where the CDN serves it from, and the deployment of web/dist
// into the files bucket (its Content-Security-Policy: console-policy.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, type Stack, Token, Validations } from 'aws-cdk-lib';
import type { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { PROJECT_ROOT } from './bundling.ts';
import { bucketObjectsFinding } from './data.ts';

/** web/dist, deployed to this prefix of the files bucket. */
export const CONSOLE_PREFIX = 'console/';
export const CONSOLE_PATH_PATTERN = '/console/*';
/** `/` answers the console's page; CloudFront's default root object (the rewritten path meets the behaviours). */
export const CONSOLE_ROOT_OBJECT = `${CONSOLE_PREFIX}index.html`;
export const CONSOLE_BUILD_DIR = join(PROJECT_ROOT, 'web', 'dist');

/**
 * web/dist (npm run build:web) into the bucket's console/ prefix: hashed assets immutable for a year, the
 * page revalidated on every load so a deploy shows at once. Without a build (template tests, a synth
 * before building) the stack carries no deployment and says so; the behaviour then answers 404.
 */
export function deployConsole(
  stack: Stack,
  bucket: Bucket,
  distribution: Distribution,
  consoleDir: string,
): void {
  if (!existsSync(join(consoleDir, 'index.html'))) {
    Annotations.of(stack).addWarningV2(
      'service:console-not-built',
      `No web console build at ${consoleDir}; the console is not deployed (build it before deploying).`,
    );
    return;
  }
  const common = {
    sources: [Source.asset(consoleDir)],
    destinationBucket: bucket,
    destinationKeyPrefix: CONSOLE_PREFIX,
    memoryLimit: 256,
  };
  const assets = new BucketDeployment(stack, 'ConsoleAssets', {
    ...common,
    exclude: ['index.html'],
    cacheControl: [CacheControl.fromString('public, max-age=31536000, immutable')],
    // Old hashed files go, but only under console/ (and never the page, which the next step writes).
    prune: true,
  });
  const page = new BucketDeployment(stack, 'ConsolePage', {
    ...common,
    exclude: ['*'],
    include: ['index.html'],
    cacheControl: [CacheControl.noCache()],
    prune: false,
    distribution,
    distributionPaths: ['/', `/${CONSOLE_ROOT_OBJECT}`],
  });
  // The page names the assets: they must be in place before it.
  page.node.addDependency(assets);
  acknowledgeDeploymentHandler(stack, bucket);
}

/** What cdk-nag finds in CDK's own BucketDeployment handler, with the reason each finding stands. */
function acknowledgeDeploymentHandler(stack: Stack, bucket: Bucket): void {
  // CDK's one handler function per stack for every BucketDeployment, a sibling of the deployments.
  const handlers = stack.node.children.filter((child) =>
    child.node.id.startsWith('Custom::CDKBucketDeployment'),
  );
  // CDK's bootstrap asset bucket, each part named literally once the stage pins it (a stage may pin its
  // region alone, as the small-site stage does for its web ACL; the partition follows from the region).
  const pinned = (value: string, token: string) => (Token.isUnresolved(value) ? `<AWS::${token}>` : value);
  const partition = Token.isUnresolved(stack.region) ? '<AWS::Partition>' : 'aws';
  const assetBucketObjects = `arn:${partition}:s3:::cdk-hnb659fds-assets-${pinned(stack.account, 'AccountId')}-${pinned(stack.region, 'Region')}/*`;
  const cdkReason =
    "CDK's BucketDeployment handler (one per stack, run only at deploy) copies the build from CDK's " +
    'asset bucket into console/ of the files bucket and invalidates the page; its grants are CDK-made.';
  for (const handler of handlers) {
    Validations.of(handler).acknowledge(
      ...[
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AwsSolutions-IAM5[Action::s3:GetBucket*]',
        'AwsSolutions-IAM5[Action::s3:GetObject*]',
        'AwsSolutions-IAM5[Action::s3:List*]',
        'AwsSolutions-IAM5[Action::s3:Abort*]',
        'AwsSolutions-IAM5[Action::s3:DeleteObject*]',
        `AwsSolutions-IAM5[Resource::${assetBucketObjects}]`,
        `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(bucket)}]`,
        // CloudFront's CreateInvalidation/GetInvalidation take no resource narrower than this.
        'AwsSolutions-IAM5[Resource::*]',
      ].map((id) => ({ id, reason: cdkReason })),
    );
  }
}
