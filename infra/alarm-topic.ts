// The SNS topic every alarm notifies: its own KMS key, TLS only, publishable by this stack's alarms alone (and
// by the account's budgets where the stage has one), and the on-call address subscribed when it names one.
import { Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { accountKeyStatement } from './key-policy.ts';
import type { StageConfig } from './stage-config.ts';

/** `scope` is the Operations construct: the key and topic keep the logical ids they had inside it. */
export function createAlarmTopic(scope: Construct, config: StageConfig): Topic {
  const conditions = fromOwnAlarmsOf(Stack.of(scope).stackName);
  const forCloudWatch = (actions: string[], resources: string[]) =>
    new PolicyStatement({
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions,
      resources,
      conditions,
    });
  // AWS Budgets publishes the budget's alerts (infra/cost-alarms.ts) on behalf of this account's budgets,
  // the conditions its guide gives; an encrypted topic needs the key too, as for CloudWatch.
  const forBudgets = (actions: string[], resources: string[]) =>
    new PolicyStatement({
      principals: [new ServicePrincipal('budgets.amazonaws.com')],
      actions,
      resources,
      conditions: {
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:budgets::${Aws.ACCOUNT_ID}:*` },
      },
    });
  const budgets = Boolean(config.infra.budget);
  const key = new Key(scope, 'AlarmsKey', {
    description: `Encrypts the alarm notifications of the ${config.stage} service`,
    enableKeyRotation: true,
    // It protects notifications in flight only: a throw-away stage lets it go with the stack.
    removalPolicy: config.infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
    policy: new PolicyDocument({
      statements: [
        accountKeyStatement(),
        // CloudWatch publishes this stack's alarms into the encrypted topic: the two actions the SNS guide
        // names for AWS services publishing to encrypted topics (GenerateDataKey* as it writes it).
        forCloudWatch(['kms:Decrypt', 'kms:GenerateDataKey*'], ['*']),
        ...(budgets ? [forBudgets(['kms:Decrypt', 'kms:GenerateDataKey*'], ['*'])] : []),
      ],
    }),
  });
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: `${Stack.of(scope).stackName} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  // The topic policy CDK writes (TLS only) replaces SNS's default one, so CloudWatch is allowed by name.
  topic.addToResourcePolicy(forCloudWatch(['sns:Publish'], [topic.topicArn]));
  if (budgets) topic.addToResourcePolicy(forBudgets(['sns:Publish'], [topic.topicArn]));
  if (config.infra.alarmEmail) topic.addSubscription(new EmailSubscription(config.infra.alarmEmail));
  return topic;
}

/** Only on behalf of this stack's alarms (no confused deputy). */
function fromOwnAlarmsOf(stackName: string): Record<string, Record<string, string>> {
  return {
    StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
    ArnLike: {
      'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${stackName}-*`,
    },
  };
}
