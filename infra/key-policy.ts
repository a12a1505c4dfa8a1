// The actions the account is allowed on the stack's customer-managed KMS keys (the master key, the alarm
// topic's key): administration (IAM decides who), plus the usage actions IAM policies may delegate. Listed
// one by one: the default policy's `kms:*` is a wildcard action (cdk-nag AwsSolutions-IAM5).
import { AccountRootPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';

export const KEY_POLICY_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:CreateGrant',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RetireGrant',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:GenerateDataKey',
];

/** The account's statement in a key policy: every key of the stack starts from it. */
export function accountKeyStatement(): PolicyStatement {
  return new PolicyStatement({
    principals: [new AccountRootPrincipal()],
    actions: KEY_POLICY_ACTIONS,
    resources: ['*'],
  });
}
